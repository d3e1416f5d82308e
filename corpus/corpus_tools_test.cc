//===- corpus/corpus_tools_test.cc - make, combine, object lists ----------===//
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/corpus_tools.h"

#include "object_list.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

TEST(MakeCorpus, CopiesBitcodeAndWritesOverride) {
  TempDir in, out;
  writeFile(in / "x.bc", "BC1");
  writeFile(in / "sub/y.bc", "BC22");
  writeFile(in / "notes.txt", "ignored");
  Result<CorpusDescription> made = makeCorpus(in.path(), out / "c", {"-O2", "-c"});
  ASSERT_TRUE(made.ok()) << made.error().message();
  EXPECT_THAT(made->modules, ElementsAre("sub/y", "x"));
  Result<Corpus> corpus = Corpus::open(out / "c");
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  EXPECT_TRUE(corpus->hasGlobalCommandOverride());
  EXPECT_EQ(corpus->modules()[0].bitcodeSize, 4u);
  EXPECT_THAT(corpus->modules()[1].args, ElementsAre("-O2", "-c"));
}

TEST(MakeCorpus, Errors) {
  TempDir in, out;
  Result<CorpusDescription> missing = makeCorpus(in / "nope", out.path(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  Result<CorpusDescription> empty = makeCorpus(in.path(), out.path(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message(), HasSubstr("no .bc files"));
  writeFile(in / "x.bc", "BC");
  Result<CorpusDescription> inside = makeCorpus(in.path(), in / "out", {});
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().code(), ErrorCode::kInvalidArgument);
}

TEST(CombineCorpora, PrefixesModulesBySubdirectory) {
  TempDir root;
  writeFile(root / "b/corpus_description.json", R"({"modules": ["m1"], "has_thinlto": false})");
  writeFile(root / "a/corpus_description.json",
            R"({"modules": ["m2", "d/m3"], "has_thinlto": false})");
  std::filesystem::create_directories(root / "not-a-corpus");
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_TRUE(combined.ok()) << combined.error().message();
  EXPECT_THAT(combined->modules, ElementsAre("a/m2", "a/d/m3", "b/m1"));
  Result<CorpusDescription> written = readDescription(root.path());
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, *combined);
}

TEST(CombineCorpora, RefusesDifferingCorpora) {
  TempDir root;
  writeFile(root / "a/corpus_description.json", R"({"modules": ["m"], "has_thinlto": false})");
  writeFile(root / "b/corpus_description.json", R"({"modules": ["m"], "has_thinlto": true})");
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_FALSE(combined.ok());
  EXPECT_EQ(combined.error().code(), ErrorCode::kParse);
  EXPECT_THAT(combined.error().message(), HasSubstr("differ by more than their modules"));
}

TEST(CombineCorpora, NothingToCombine) {
  TempDir root;
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_FALSE(combined.ok());
  EXPECT_EQ(combined.error().code(), ErrorCode::kNotFound);
}

TEST(SplitShellWords, HandlesQuotesAndEscapes) {
  EXPECT_THAT(detail::splitShellWords(R"(clang  -c 'a b.c' -DX="1 2" -o\ x a\"b "" )"),
              ElementsAre("clang", "-c", "a b.c", "-DX=1 2", "-o x", "a\"b", ""));
}

TEST(ObjectsFromCompileCommands, FindsOutputsAndNamesThem) {
  std::string json = R"([
    {"directory": "/build", "file": "a.c", "arguments": ["clang", "-c", "a.c", "-o", "lib/a.o"]},
    {"directory": "/build", "file": "b.c", "command": "clang -c b.c -ob.o"},
    {"directory": "/build", "file": "c.c", "command": "clang -c c.c"},
    {"directory": "/build", "file": "d.c", "command": "clang -c d.c -o /build/sub/d.o"},
    {"directory": "/build", "file": "e.c", "command": "clang -c e.c -o ../e.o"},
    {"directory": "/build", "file": "f.c", "command": "clang -c f.c -o /elsewhere/f.o"}
  ])";
  Result<std::vector<detail::ObjectJob>> jobs =
      detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 6u);
  EXPECT_EQ((*jobs)[0].name, "lib/a.o");
  EXPECT_EQ((*jobs)[0].object, "/build/lib/a.o");
  EXPECT_EQ((*jobs)[1].name, "b.o");
  ASSERT_TRUE((*jobs)[2].issue);
  EXPECT_EQ((*jobs)[2].issue->problem, ObjectProblem::kNoOutputInCommand);
  EXPECT_EQ((*jobs)[3].name, "sub/d.o");
  ASSERT_TRUE((*jobs)[4].issue);
  EXPECT_EQ((*jobs)[4].issue->problem, ObjectProblem::kBadName);
  ASSERT_TRUE((*jobs)[5].issue);
  EXPECT_EQ((*jobs)[5].issue->problem, ObjectProblem::kBadName);
}

TEST(ObjectsFromCompileCommands, ObjBaseDirOverridesDirectory) {
  std::string json = R"([{"directory": "/b", "arguments": ["cc", "-o", "x.o"]}])";
  auto jobs = detail::objectsFromCompileCommands(json, "cc.json", std::filesystem::path("/o"));
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ((*jobs)[0].object, "/o/x.o");
  EXPECT_EQ((*jobs)[0].name, "x.o");
}

TEST(ObjectsFromCompileCommands, MalformedInputs) {
  auto expectParse = [](std::string_view json, std::string_view what) {
    auto jobs = detail::objectsFromCompileCommands(json, "cc.json", std::nullopt);
    ASSERT_FALSE(jobs.ok()) << json;
    EXPECT_EQ(jobs.error().code(), ErrorCode::kParse);
    EXPECT_THAT(jobs.error().message(), HasSubstr(what)) << json;
  };
  expectParse("[{", "malformed JSON");
  expectParse(R"({"a": 1})", "must be a JSON array");
  expectParse("[1]", "entry 0: not a JSON object");
  expectParse(R"([{"arguments": []}])", "'directory'");
  expectParse(R"([{"directory": "/b"}])", "neither 'arguments' nor 'command'");
  expectParse(R"([{"directory": "/b", "arguments": [1]}])", "must hold strings");
}

TEST(ObjectsFromDirectory, FindsObjectFilesRecursively) {
  TempDir dir;
  writeFile(dir / "z.o", "");
  writeFile(dir / "sub/a.o", "");
  writeFile(dir / "sub/a.c", "");
  auto jobs = detail::objectsFromDirectory(dir.path(), std::nullopt);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].name, "sub/a.o");
  EXPECT_EQ((*jobs)[1].name, "z.o");
  auto missing = detail::objectsFromDirectory(dir / "nope", std::nullopt);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST(MarkDuplicates, KeepsTheFirst) {
  std::vector<detail::ObjectJob> jobs(3);
  jobs[0].name = "a.o";
  jobs[1].name = "b.o";
  jobs[2].name = "a.o";
  detail::markDuplicates(jobs);
  EXPECT_FALSE(jobs[0].issue);
  EXPECT_FALSE(jobs[1].issue);
  ASSERT_TRUE(jobs[2].issue);
  EXPECT_EQ(jobs[2].issue->problem, ObjectProblem::kDuplicate);
}

} // namespace
} // namespace mlgo::corpus
