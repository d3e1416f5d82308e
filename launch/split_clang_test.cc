//===- launch/split_clang_test.cc - a call taken apart runs clang's own jobs ===//
///
/// With the real clang-22 (`-###`): each source compiled alone by
/// compileAlone runs the `-cc1` command the whole call would have run for it
/// (a compile-and-link's temporary object names aside), and linkWith's link
/// runs the call's own linker command on those objects.
///
//===----------------------------------------------------------------------===//
#include "mlgo/launch/split_call.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/subprocess.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mlgo::launch {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;
using Command = std::vector<std::string>;

/// The commands `clang -### args` prints, each as its words.
std::vector<Command> jobsOf(const Args& args) {
  support::CleanupScope scope;
  support::SpawnOptions spawn;
  spawn.argv = {MLGO_CLANG, "-###"};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  auto child = support::Subprocess::spawn(scope, spawn);
  EXPECT_TRUE(child.ok());
  if (!child.ok())
    return {};
  EXPECT_TRUE((*child)->waitUntil(support::Clock::now() + std::chrono::minutes(2)).ok());
  EXPECT_TRUE((*child)->exitStatus() && (*child)->exitStatus()->success())
      << (*child)->outputText();
  std::istringstream text((*child)->outputText());
  std::vector<Command> jobs;
  for (std::string line; std::getline(text, line);) {
    if (!line.starts_with(" \""))
      continue;
    Command words;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] != '"')
        continue;
      std::string word;
      for (++i; i < line.size() && line[i] != '"'; ++i)
        word += line[i] == '\\' && i + 1 < line.size() ? line[++i] : line[i];
      words.push_back(word);
    }
    jobs.push_back(words);
  }
  return jobs;
}

/// The value after `-o` in `job`; empty when none.
std::string outputOf(const Command& job) {
  for (size_t i = 0; i + 1 < job.size(); ++i)
    if (job[i] == "-o")
      return job[i + 1];
  return {};
}

/// `job` with each word in `names` replaced by its position ("OBJ<k>").
Command renamed(Command job, const std::vector<std::string>& names) {
  for (std::string& word : job)
    for (size_t k = 0; k < names.size(); ++k)
      if (word == names[k])
        word = "OBJ" + std::to_string(k);
  return job;
}

class SplitClangTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/mlgo-split-clang-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    for (const char* name : {"a.c", "b.c", "m.cc", "n.cpp", "y.o"})
      std::ofstream(dir_ / name) << "int x;\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// `line` with each `@name` replaced by the absolute path of that file.
  Args args(const std::string& line) const {
    std::istringstream in(line);
    Args out;
    for (std::string word; in >> word;)
      out.push_back(word.starts_with("@") ? (dir_ / word.substr(1)).string() : word);
    return out;
  }

  fs::path dir_;
};

TEST_F(SplitClangTest, CompileAndLinkRunsTheSameJobs) {
  for (const char* line :
       {"-O2 -shared -fPIC -fvisibility=hidden @a.c @b.c -o @lib.so -Wl,-soname,lib.so.1",
        "-Oz @a.c @y.o -o @prog -lm -static",
        "-O2 -flto=thin -fuse-ld=lld @a.c @b.c -o @p -pie",
        "-Oz -g -DX=1 -Iinc @b.c",
        "-O2 -std=c++17 -fno-exceptions @m.cc @n.cpp -o @q"}) {
    Args call = args(line);
    CallKind kind = classifyCall(call);
    ASSERT_TRUE(kind.split && kind.link) << line << ": " << kind.reason;
    std::vector<Command> whole = jobsOf(call);
    ASSERT_EQ(whole.size(), kind.sources.size() + 1) << line;
    std::vector<std::string> temporaries, objects;
    for (size_t k = 0; k < kind.sources.size(); ++k) {
      objects.push_back((dir_ / ("obj" + std::to_string(k) + ".o")).string());
      std::vector<Command> alone = jobsOf(compileAlone(call, kind, k, objects.back()));
      ASSERT_EQ(alone.size(), 1u) << line;
      temporaries.push_back(outputOf(whole[k]));
      EXPECT_EQ(renamed(alone[0], objects), renamed(whole[k], temporaries)) << line;
    }
    for (const std::string& object : objects)
      std::ofstream{object}; // the link's -### wants its inputs to exist
    std::vector<Command> link = jobsOf(linkWith(call, kind, objects));
    ASSERT_EQ(link.size(), 1u) << line;
    EXPECT_EQ(renamed(link[0], objects), renamed(whole.back(), temporaries)) << line;
  }
}

TEST_F(SplitClangTest, SeveralCompilesRunTheSameJobs) {
  for (const char* line : {"-O2 -c @a.c @b.c", "-Oz -g -MMD -MP -c @m.cc -DX @n.cpp"}) {
    Args call = args(line);
    CallKind kind = classifyCall(call);
    ASSERT_TRUE(kind.split && !kind.link) << line << ": " << kind.reason;
    std::vector<Command> whole = jobsOf(call);
    ASSERT_EQ(whole.size(), kind.sources.size()) << line;
    for (size_t k = 0; k < kind.sources.size(); ++k) {
      std::string object = objectName(call[kind.sources[k]]);
      std::vector<Command> alone = jobsOf(compileAlone(call, kind, k, object));
      ASSERT_EQ(alone.size(), 1u) << line;
      EXPECT_EQ(alone[0], whole[k]) << line; // the object too: where clang puts it
    }
  }
}

} // namespace
} // namespace mlgo::launch
