//===- support/compiler_shims_test.cc - compiler names on PATH ------------===//
///
/// The names and their roles; shims found through PATH run their role's
/// command with the arguments intact (spaces, quotes); bad commands and an
/// existing directory are refused and leave nothing behind.
///
//===----------------------------------------------------------------------===//
#include "mlgo/support/compiler_shims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

namespace mlgo::support {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ShimDir : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "mlgo-shims-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Runs `script` with `sh -c` and PATH = the shims first; its exit code.
  int runWithShims(const fs::path& shims, const std::string& script) {
    std::string path = shimmedPath(shims, std::getenv("PATH"));
    std::string command =
        "env PATH=" + shellQuote(path) + " /bin/sh -c " + shellQuote(script) + " 2>&1";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path root_;
};

TEST(CompilerShimNames, CoverTheUsualCompilersAndTheHostsPrefixes) {
  std::vector<CompilerShimName> names = compilerShimNames("x86_64");
  std::map<std::string, CompilerRole> roles;
  for (const CompilerShimName& shim : names)
    roles.emplace(shim.name, shim.role);
  EXPECT_EQ(roles.size(), names.size()) << "duplicate names";
  EXPECT_EQ(names.size(), 450u);
  for (const char* c : {"cc", "gcc", "clang", "gcc-12", "clang-14", "clang-22", "gcc-4", "clang-30",
                        "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-gcc-12",
                        "x86_64-pc-linux-gnu-clang", "x86_64-unknown-linux-gnu-clang-22"}) {
    ASSERT_TRUE(roles.contains(c)) << c;
    EXPECT_EQ(roles[c], CompilerRole::kC) << c;
  }
  for (const char* cxx :
       {"c++", "g++", "clang++", "g++-12", "clang++-14", "clang++-22", "x86_64-linux-gnu-g++",
        "x86_64-linux-gnu-g++-12", "x86_64-pc-linux-gnu-clang++-22"}) {
    ASSERT_TRUE(roles.contains(cxx)) << cxx;
    EXPECT_EQ(roles[cxx], CompilerRole::kCxx) << cxx;
  }
  for (const char* other : {"c99", "c89", "cpp", "gcc-ar", "gcc-ar-12", "clang-cpp-22", "clang-cl",
                            "gcc-4.9", "clang-3", "aarch64-linux-gnu-gcc", "x86_64-linux-gnu-cc"})
    EXPECT_FALSE(roles.contains(other)) << other;

  std::vector<CompilerShimName> arm = compilerShimNames("aarch64");
  EXPECT_EQ(arm.size(), names.size());
  EXPECT_TRUE(std::any_of(arm.begin(), arm.end(), [](const CompilerShimName& shim) {
    return shim.name == "aarch64-linux-gnu-g++-13" && shim.role == CompilerRole::kCxx;
  }));
  EXPECT_FALSE(hostMachine().empty());
}

TEST_F(ShimDir, EveryNameRunsItsRolesCommandWithTheArgumentsIntact) {
  fs::path shims = root_ / "bin", log = root_ / "log";
  CompilerShimOptions options;
  // `sh -c SCRIPT NAME ARGS...`: the shim's arguments become "$@" of SCRIPT.
  std::string record = "printf '%s|' \"$0\" \"$@\" >> " + shellQuote(log.string()) + "; echo >> " +
                       shellQuote(log.string());
  options.cCommand = {"/bin/sh", "-c", record, "role C"};
  options.cxxCommand = {"/bin/sh", "-c", record, "role C++"};
  options.machine = "x86_64";
  Status written = writeCompilerShims(shims, options);
  ASSERT_TRUE(written.ok()) << written.error().message();
  EXPECT_EQ(std::distance(fs::directory_iterator(shims), {}), 452); // 450 names + 2 scripts

  ASSERT_EQ(runWithShims(shims, "gcc -c 'a b.c' && g++-12 -O2 \"it's.cc\" && cc && "
                                "x86_64-linux-gnu-gcc-13 -x c - && c++ -o p p.o && "
                                "clang++-22 -c x.cpp"),
            0);
  EXPECT_EQ(read(log), "role C|-c|a b.c|\n"
                       "role C++|-O2|it's.cc|\n"
                       "role C|\n"
                       "role C|-x|c|-|\n"
                       "role C++|-o|p|p.o|\n"
                       "role C++|-c|x.cpp|\n");
  // A name that is not shimmed is looked up further along PATH as usual.
  EXPECT_NE(runWithShims(shims, "command -v c99 | grep -q " + shellQuote(shims.string())), 0);
}

TEST_F(ShimDir, RefusesCommandsThatWouldRecurseAndExistingDirectories) {
  fs::path shims = root_ / "bin";
  CompilerShimOptions options;
  options.cCommand = {"clang-22"};
  options.cxxCommand = {"/usr/bin/clang++-22"};
  Status relative = writeCompilerShims(shims, options);
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(relative.error().message(), HasSubstr("'clang-22'"));
  EXPECT_FALSE(fs::exists(shims));

  options.cCommand = {(shims / "cc").string()};
  Status inside = writeCompilerShims(shims, options);
  ASSERT_FALSE(inside.ok());
  EXPECT_THAT(inside.error().message(), HasSubstr("inside the shim directory"));
  EXPECT_FALSE(fs::exists(shims));

  options.cCommand = {};
  EXPECT_EQ(writeCompilerShims(shims, options).error().code(), ErrorCode::kInvalidArgument);

  options.cCommand = {"/usr/bin/clang-22"};
  fs::create_directory(shims);
  std::ofstream(shims / "keep") << "mine";
  Status exists = writeCompilerShims(shims, options);
  ASSERT_FALSE(exists.ok());
  EXPECT_EQ(exists.error().code(), ErrorCode::kIo);
  EXPECT_THAT(exists.error().message(), HasSubstr("exists already"));
  EXPECT_EQ(read(shims / "keep"), "mine"); // Not ours: untouched.

  // A parent that does not exist: kIo.
  Status noParent = writeCompilerShims(root_ / "no-such-dir" / "bin", options);
  EXPECT_EQ(noParent.error().code(), ErrorCode::kIo);
}

TEST(ShimmedPath, PutsTheShimsFirst) {
  EXPECT_EQ(shimmedPath("/s", "/usr/bin:/bin"), "/s:/usr/bin:/bin");
  EXPECT_EQ(shimmedPath("/s", nullptr), "/s:/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(shimmedPath("/s", ""), "/s");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
}

} // namespace
} // namespace mlgo::support
