//===- corpus/compile_entry_test.cc - database entries and object lists ---===//
#include "mlgo/corpus/compile_entry.h"

#include "object_list.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

TEST(SplitShellWords, HandlesQuotesAndEscapes) {
  EXPECT_THAT(splitShellWords(R"(clang  -c 'a b.c' -DX="1 2" -o\ x a\"b "" )"),
              ElementsAre("clang", "-c", "a b.c", "-DX=1 2", "-o x", "a\"b", ""));
}

/// The objects of `args` run in /b, or nullopt with `why` set.
std::optional<std::vector<fs::path>> objects(std::vector<std::string> args, std::string* why,
                                             std::string_view output = "",
                                             std::string_view file = "") {
  why->clear();
  std::vector<CompiledObject> found = objectOutputs(args, "/b", output, file, why);
  if (found.empty())
    return std::nullopt;
  std::vector<fs::path> paths;
  for (const CompiledObject& o : found)
    paths.push_back(o.object);
  return paths;
}

TEST(ObjectOutputs, FollowClang) {
  std::string why;
  using Paths = std::vector<fs::path>;
  auto out = [&why](std::vector<std::string> args, std::string_view output = "",
                    std::string_view file = "") { return objects(args, &why, output, file); };
  EXPECT_EQ(out({"cc", "-c", "x.c", "-o", "o/x.o"}), Paths{"/b/o/x.o"});
  EXPECT_EQ(out({"cc", "-c", "x.c", "-oy.o"}), Paths{"/b/y.o"});
  EXPECT_EQ(out({"cc", "-c", "x.c", "--output=/z/y.o"}), Paths{"/z/y.o"});
  EXPECT_EQ(out({"cc", "-c", "x.c", "--output", "y.o"}), Paths{"/b/y.o"});
  EXPECT_EQ(out({"cc", "-objcmt-migrate-literals", "-c", "x.c"}), Paths{"/b/x.o"});
  // No -o: the `output` key, else the source's stem + .o in the directory.
  EXPECT_EQ(out({"cc", "-c", "src/x.c"}, "k.o"), Paths{"/b/k.o"});
  EXPECT_EQ(out({"cc", "-c", "src/lib.cpp"}), Paths{"/b/lib.o"});
  EXPECT_EQ(out({"cc", "-c", "-DA"}, "", "src/y.cc"), Paths{"/b/y.o"});
  EXPECT_EQ(out({"cc", "-c", "-DA"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("names no source file"));
  EXPECT_EQ(out({"cc", "x.c", "-o", "prog"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("no -c"));
  EXPECT_EQ(out({"cc", "-c", "-E", "x.c", "-o", "x.i"}), std::nullopt);
  EXPECT_THAT(why, HasSubstr("'-E'"));
  // An option's value is no source, whatever its name; after -x LANG any input is one.
  EXPECT_EQ(out({"cc", "-include", "pre.c", "-MT", "t.c", "-D", "F=a.c", "-c", "x.c"}),
            Paths{"/b/x.o"});
  EXPECT_EQ(out({"cc", "-c", "-x", "c", "gen.inc"}), Paths{"/b/gen.o"});
  EXPECT_EQ(out({"cc", "-c", "lib.a", "x.s"}), Paths{"/b/x.o"});
}

TEST(ObjectOutputs, SeveralSourcesInOneCompileGiveOneObjectEach) {
  std::string why;
  std::vector<std::string> args = {"cc", "-Oz", "-c", "a.c", "sub/b.c", "/abs/c.cpp"};
  std::vector<CompiledObject> found = objectOutputs(args, "/b", "", "", &why);
  ASSERT_EQ(found.size(), 3u) << why;
  EXPECT_EQ(found[0].object, "/b/a.o");
  EXPECT_EQ(found[1].object, "/b/b.o");
  EXPECT_EQ(found[2].object, "/b/c.o");
  EXPECT_EQ(found[1].sourceArg, 4u);
  EXPECT_THAT(sourceArguments(args), ElementsAre(3u, 4u, 5u));
  // Bear writes one entry per source, naming it in `file` (and `output`).
  found = objectOutputs(args, "/b", "sub/b.o", "/b/sub/b.c", &why);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].object, "/b/sub/b.o");
  EXPECT_EQ(found[0].sourceArg, 4u);
  // clang refuses -o with several outputs: no object, and why.
  EXPECT_EQ(objects({"cc", "-c", "a.c", "b.c", "-o", "x.o"}, &why), std::nullopt);
  EXPECT_THAT(why, HasSubstr("2 sources into the one -o 'x.o'"));
}

TEST(RecompileArguments, CompileOneSourceWithoutOutputsOrDependencyFiles) {
  std::vector<std::string> args = {
      "cc",           "-Oz",         "-MD",          "-MMD",
      "-MP",          "-MG",         "-MV",          "-MF",
      "x.d",          "-MFy.d",      "-MT",          "x.o",
      "-MTx.o",       "-MQ",         "$(x)",         "-MJ",
      "x.json",       "-Wp,-MD,k.d", "-Wp,-MMD,k.d", "-Wp,-DKEEP",
      "-c",           "a.c",         "b.c",          "-I",
      "inc",          "-o",          "x.o",          "-ox.o",
      "--output=x.o", "--output",    "x.o",          "-objcmt-migrate-all"};
  ASSERT_THAT(sourceArguments(args), ElementsAre(21u, 22u));
  EXPECT_THAT(recompileArguments(args, 22), ElementsAre("cc", "-Oz", "-Wp,-DKEEP", "-c", "b.c",
                                                        "-I", "inc", "-objcmt-migrate-all"));
  EXPECT_THAT(recompileArguments({"cc", "-c", "a.c", "b.c"}, 0),
              ElementsAre("cc", "-c", "a.c", "b.c"));
}

TEST(ResponseFiles, ExpandRelativeToTheDirectoryRecursively) {
  TempDir dir;
  writeFile(dir / "flags.rsp", "-DA='x y'\n-o out/a.o @more.rsp");
  writeFile(dir / "more.rsp", "-O2");
  writeFile(dir / "loop.rsp", "@loop.rsp");
  auto args = expandResponseFiles({"cc", "-c", "@flags.rsp", "a.c", "@"}, dir.path());
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("cc", "-c", "-DA=x y", "-o", "out/a.o", "-O2", "a.c", "@"));
  auto missing = expandResponseFiles({"cc", "@nope.rsp"}, dir.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("nope.rsp"));
  auto loop = expandResponseFiles({"cc", "@loop.rsp"}, dir.path());
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

/// The module compiles of a database whose entries run in `dir` (each
/// entry: its directory relative to `dir`, and its command).
std::map<std::string, ModuleCompile>
compilesOf(const fs::path& dir, std::vector<std::pair<std::string, std::string>> entries) {
  std::string json = "[";
  for (auto& [sub, command] : entries) // (no quotes nor backslashes in these)
    json += fmt::format(R"({}{{"directory": "{}", "command": "{}"}})", json.size() > 1 ? "," : "",
                        (dir / sub).lexically_normal().string(), command);
  json += "]";
  Result<std::vector<ModuleCompile>> compiles = moduleCompiles(json, "cc.json");
  EXPECT_TRUE(compiles.ok()) << compiles.error().message();
  std::map<std::string, ModuleCompile> byName;
  for (ModuleCompile& c : compiles.ok() ? *compiles : std::vector<ModuleCompile>{})
    byName.emplace(c.duplicate ? c.object.string() : c.module, std::move(c));
  return byName;
}

TEST(ModuleCompiles, EveryBuildStyleFindsEachModulesOwnCompile) {
  TempDir dir;
  writeFile(dir / "rsp/flags.rsp", "-Oz -c r.c -o obj/r.o -MMD -MF obj/r.d @more.rsp");
  writeFile(dir / "rsp/more.rsp", "-DMORE");
  auto compiles = compilesOf(
      dir.path(),
      {{"make", "clang-22 -Oz -c x.c"},              // no -o
       {"make", "clang-22 -Oz -c src/y.c"},          // no -o, source elsewhere
       {"multi", "clang-22 -Oz -c a.c b.c sub/c.c"}, // several sources
       {"joined", "clang-22 -Oz -c j.c -oout/j.o"},  // -ofile
       {"rsp", "clang-22 @flags.rsp"},               // response files
       {"deps", "clang-22 -Oz -MMD -MF .deps/d.d -MT d.o -c d.c -o d.o"},
       {"cm/build", "clang-22 -Oz -o CMakeFiles/p.dir/s.c.o -c " + (dir / "cm/src/s.c").string()},
       {"tree/src", "clang-22 -Oz -c z.c -o ../obj/z.o"}, // outside the directory
       {"lt", "clang-22 -Oz -MD -MP -MF .deps/t.Tpo -c t.c -fPIC -DPIC -o .libs/t.o"},
       {"lt", "clang-22 -Oz -MD -MP -MF .deps/t.Tpo -c t.c -o t.o"},
       {"make", "clang-22 -O2 -c x.c"}, // the same object again
       {"link", "clang-22 x.o -o prog"}});
  auto args = [&](const std::string& module) {
    return compiles.count(module) ? compiles.at(module).arguments : std::vector<std::string>{};
  };
  EXPECT_THAT(args("x.o"), ElementsAre("clang-22", "-Oz", "-c", "x.c"));
  EXPECT_EQ(compiles.at("x.o").directory, dir / "make");
  EXPECT_THAT(args("y.o"), ElementsAre("clang-22", "-Oz", "-c", "src/y.c"));
  EXPECT_THAT(args("a.o"), ElementsAre("clang-22", "-Oz", "-c", "a.c"));
  EXPECT_THAT(args("b.o"), ElementsAre("clang-22", "-Oz", "-c", "b.c"));
  EXPECT_THAT(args("c.o"), ElementsAre("clang-22", "-Oz", "-c", "sub/c.c"));
  EXPECT_THAT(args("out/j.o"), ElementsAre("clang-22", "-Oz", "-c", "j.c"));
  EXPECT_THAT(args("obj/r.o"), ElementsAre("clang-22", "-Oz", "-c", "r.c", "-DMORE"));
  EXPECT_THAT(args("d.o"), ElementsAre("clang-22", "-Oz", "-c", "d.c"));
  EXPECT_THAT(args("CMakeFiles/p.dir/s.c.o"),
              ElementsAre("clang-22", "-Oz", "-c", (dir / "cm/src/s.c").string()));
  // Named from the common root of the objects outside their directory (here: its own).
  EXPECT_THAT(args("z.o"), ElementsAre("clang-22", "-Oz", "-c", "z.c"));
  EXPECT_EQ(compiles.at("z.o").object, dir / "tree/obj/z.o");
  EXPECT_THAT(args(".libs/t.o"), ElementsAre("clang-22", "-Oz", "-c", "t.c", "-fPIC", "-DPIC"));
  EXPECT_THAT(args("t.o"), ElementsAre("clang-22", "-Oz", "-c", "t.c"));
  // The second compile of make/x.o is the build's, not the corpus's: keyed by its object.
  ASSERT_TRUE(compiles.count((dir / "make/x.o").string()));
  EXPECT_TRUE(compiles.at((dir / "make/x.o").string()).duplicate);
  EXPECT_THAT(compiles.at((dir / "make/x.o").string()).arguments, Contains("-O2"));
  EXPECT_EQ(compiles.size(), 13u);
}

TEST(ObjectsFromCompileCommands, OneEntryOfSeveralSourcesGivesAJobEach) {
  std::string json = R"([
    {"directory": "/build", "arguments": ["clang", "-c", "a.c", "lib/b.c"]},
    {"directory": "/build", "arguments": ["clang", "-c", "a.c", "b.c", "-o", "x.o"]}
  ])";
  auto list = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->jobs.size(), 3u);
  EXPECT_EQ(list->jobs[0].name, "a.o");
  EXPECT_EQ(list->jobs[1].name, "b.o");
  EXPECT_EQ(list->jobs[1].output, 1u);
  ASSERT_TRUE(list->jobs[2].issue);
  EXPECT_EQ(list->jobs[2].issue->problem, ObjectProblem::kNoOutputInCommand);
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
