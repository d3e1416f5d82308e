//===- corpus/compile_entry_test.cc - database entries and object lists ---===//
#include "compile_entry.h"
#include "object_list.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

TEST(SplitShellWords, HandlesQuotesAndEscapes) {
  EXPECT_THAT(detail::splitShellWords(R"(clang  -c 'a b.c' -DX="1 2" -o\ x a\"b "" )"),
              ElementsAre("clang", "-c", "a b.c", "-DX=1 2", "-o x", "a\"b", ""));
}

TEST(ObjectOutput, FollowsClang) {
  std::string why;
  auto out = [&why](std::vector<std::string> args, std::string_view output = "",
                    std::string_view file = "") {
    why.clear();
    return detail::objectOutput(args, "/b", output, file, &why);
  };
  EXPECT_EQ(out({"cc", "-c", "x.c", "-o", "o/x.o"}), fs::path("/b/o/x.o"));
  EXPECT_EQ(out({"cc", "-c", "x.c", "-oy.o"}), fs::path("/b/y.o"));
  EXPECT_EQ(out({"cc", "-c", "x.c", "--output=/z/y.o"}), fs::path("/z/y.o"));
  EXPECT_EQ(out({"cc", "-objcmt-migrate-literals", "-c", "x.c"}), fs::path("/b/x.o"));
  // No -o: the `output` key, else the source's stem + .o in the directory.
  EXPECT_EQ(out({"cc", "-c", "src/x.c"}, "k.o"), fs::path("/b/k.o"));
  EXPECT_EQ(out({"cc", "-c", "src/lib.cpp"}), fs::path("/b/lib.o"));
  EXPECT_EQ(out({"cc", "-c", "-DA", "src/x.c"}, "", "src/y.cc"), fs::path("/b/y.o"));
  EXPECT_EQ(out({"cc", "-c", "-DA"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("names no source file"));
  EXPECT_EQ(out({"cc", "x.c", "-o", "prog"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("no -c"));
  EXPECT_EQ(out({"cc", "-c", "-E", "x.c", "-o", "x.i"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("'-E'"));
}

TEST(ResponseFiles, ExpandRelativeToTheDirectoryRecursively) {
  TempDir dir;
  writeFile(dir / "flags.rsp", "-DA='x y'\n-o out/a.o @more.rsp");
  writeFile(dir / "more.rsp", "-O2");
  writeFile(dir / "loop.rsp", "@loop.rsp");
  auto args = detail::expandResponseFiles({"cc", "-c", "@flags.rsp", "a.c", "@"}, dir.path());
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("cc", "-c", "-DA=x y", "-o", "out/a.o", "-O2", "a.c", "@"));
  auto missing = detail::expandResponseFiles({"cc", "@nope.rsp"}, dir.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("nope.rsp"));
  auto loop = detail::expandResponseFiles({"cc", "@loop.rsp"}, dir.path());
  ASSERT_FALSE(loop.ok());
  EXPECT_THAT(loop.error().message(), HasSubstr("nested more than"));
}

TEST(ObjectsFromCompileCommands, NamesObjectsInsideTheirDirectory) {
  std::string json = R"([
    {"directory": "/build", "file": "a.c", "arguments": ["clang", "-c", "a.c", "-o", "lib/a.o"]},
    {"directory": "/build", "file": "b.c", "command": "clang -c b.c -ob.o"},
    {"directory": "/build", "file": "c.c", "command": "clang -c c.c"},
    {"directory": "/build", "file": "d.c", "command": "clang -c d.c -o /build/sub/d.o"},
    {"directory": "/build", "file": "p", "command": "clang a.o b.o -o prog"}
  ])";
  auto list = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
  ASSERT_TRUE(list.ok()) << list.error().message();
  const auto& jobs = list->jobs;
  ASSERT_EQ(jobs.size(), 5u);
  EXPECT_EQ(jobs[0].name, "lib/a.o");
  EXPECT_EQ(jobs[0].object, "/build/lib/a.o");
  EXPECT_EQ(jobs[1].name, "b.o");
  EXPECT_EQ(jobs[2].name, "c.o");
  EXPECT_EQ(jobs[3].name, "sub/d.o");
  ASSERT_TRUE(jobs[4].issue);
  EXPECT_EQ(jobs[4].issue->problem, ObjectProblem::kNoOutputInCommand);
  EXPECT_THAT(jobs[4].issue->message, HasSubstr("entry 4"));
  EXPECT_TRUE(list->notes.empty());
}

TEST(ObjectsFromCompileCommands, NamesOutsideObjectsRelativeToTheirCommonRoot) {
  std::string json = R"([
    {"directory": "/src", "file": "a.c", "command": "clang -c a.c -o /out/objs/lua/a.o"},
    {"directory": "/src", "file": "b.c", "command": "clang -c b.c -o /out/objs/lib/b.o"},
    {"directory": "/src", "file": "c.c", "command": "clang -c c.c -o c.o"}
  ])";
  auto list = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->jobs[0].name, "lua/a.o");
  EXPECT_EQ(list->jobs[1].name, "lib/b.o");
  EXPECT_EQ(list->jobs[2].name, "c.o");
  ASSERT_EQ(list->notes.size(), 1u);
  EXPECT_THAT(list->notes[0], HasSubstr("2 of 3 objects"));
  EXPECT_THAT(list->notes[0], HasSubstr("/out/objs"));
  EXPECT_THAT(list->notes[0], HasSubstr("--obj_base_dir"));
}

TEST(ObjectsFromCompileCommands, ObjBaseDirOverridesDirectory) {
  std::string json = R"([{"directory": "/b", "arguments": ["cc", "-c", "x.c", "-o", "/o/x.o"]},
                         {"directory": "/b", "arguments": ["cc", "-c", "y.c", "-o", "y.o"]}])";
  auto list = detail::objectsFromCompileCommands(json, "cc.json", fs::path("/o"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->jobs[0].object, "/o/x.o");
  EXPECT_EQ(list->jobs[0].name, "x.o");
  ASSERT_TRUE(list->jobs[1].issue);
  EXPECT_EQ(list->jobs[1].issue->problem, ObjectProblem::kBadName);
  EXPECT_THAT(list->jobs[1].issue->message, HasSubstr("'/b/y.o' is not inside '/o'"));
}

TEST(ObjectsFromCompileCommands, AResponseFileProblemStaysWithItsEntry) {
  TempDir dir;
  writeFile(dir / "ok.rsp", "-c a.c -o a.o");
  std::string json = fmt::format(R"([{{"directory": "{0}", "file": "a.c", "command": "cc @ok.rsp"}},
      {{"directory": "{0}", "file": "b.c", "command": "cc @gone.rsp"}}])",
                                 dir.path().string());
  auto list = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->jobs[0].name, "a.o");
  ASSERT_TRUE(list->jobs[1].issue);
  EXPECT_EQ(list->jobs[1].issue->problem, ObjectProblem::kBadResponseFile);
  EXPECT_THAT(list->jobs[1].issue->message, HasSubstr("gone.rsp"));
}

TEST(ObjectsFromCompileCommands, MalformedInputs) {
  auto expectParse = [](std::string_view json, std::string_view what) {
    auto list = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
    ASSERT_FALSE(list.ok()) << json;
    EXPECT_EQ(list.error().code(), ErrorCode::kParse);
    EXPECT_THAT(list.error().message(), HasSubstr(what)) << json;
  };
  expectParse("[{", "malformed JSON");
  expectParse(R"({"a": 1})", "must be a JSON array");
  expectParse("[1]", "entry 0: not a JSON object");
  expectParse(R"([{"arguments": []}])", "'directory'");
  expectParse(R"([{"directory": "/b"}])", "neither 'arguments' nor 'command'");
  expectParse(R"([{"directory": "/b", "arguments": [1]}])", "must hold strings");
  expectParse(R"([{"directory": "/b", "command": "  "}])", "the command is empty");
}

TEST(ObjectsFromDirectory, FindsObjectFilesRecursively) {
  TempDir dir;
  writeFile(dir / "z.o", "");
  writeFile(dir / "sub/a.o", "");
  writeFile(dir / "sub/a.c", "");
  writeFile(dir / "sub/a.o.3.import.bc", "");
  auto list = detail::objectsFromDirectory(dir.path(), std::nullopt);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->jobs.size(), 2u);
  EXPECT_EQ(list->jobs[0].name, "sub/a.o");
  EXPECT_EQ(list->jobs[1].name, "z.o");
  auto thin =
      detail::objectsFromDirectory(dir.path(), std::nullopt, ".3.import.bc", ".3.import.bc");
  ASSERT_TRUE(thin.ok());
  ASSERT_EQ(thin->jobs.size(), 1u);
  EXPECT_EQ(thin->jobs[0].name, "sub/a.o");
  EXPECT_EQ(thin->jobs[0].object, dir / "sub/a.o");
  auto missing = detail::objectsFromDirectory(dir / "nope", std::nullopt);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST(MarkDuplicates, KeepsTheFirstAndSaysWhy) {
  std::vector<detail::ObjectJob> jobs(4);
  const char* objects[] = {"/b/a.o", "/b/b.o", "/b/a.o", "/c/a.o"};
  const char* names[] = {"a.o", "b.o", "a.o", "a.o"};
  for (int i = 0; i < 4; ++i) {
    jobs[i].object = objects[i];
    jobs[i].name = names[i];
  }
  detail::markDuplicates(jobs);
  EXPECT_FALSE(jobs[0].issue);
  EXPECT_FALSE(jobs[1].issue);
  ASSERT_TRUE(jobs[2].issue);
  EXPECT_EQ(jobs[2].issue->problem, ObjectProblem::kDuplicate);
  EXPECT_THAT(jobs[2].issue->message, HasSubstr("more than one command"));
  ASSERT_TRUE(jobs[3].issue);
  EXPECT_THAT(jobs[3].issue->message, HasSubstr("already taken by '/b/a.o'"));
}

TEST(CommonRoot, IsTheDeepestSharedDirectory) {
  EXPECT_EQ(detail::commonRoot({"/a/b/c/x.o", "/a/b/d/y.o"}), fs::path("/a/b"));
  EXPECT_EQ(detail::commonRoot({"/a/b/x.o"}), fs::path("/a/b"));
  EXPECT_EQ(detail::commonRoot({"/a/x.o", "/b/y.o"}), fs::path("/"));
}

} // namespace
} // namespace mlgo::corpus
