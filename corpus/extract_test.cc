//===- corpus/extract_test.cc - extraction with real clang-22 -------------===//
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/extract.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>

namespace mlgo::corpus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

constexpr std::string_view kSource = R"(
static int square(int x) { return x * x; }
int sumSquares(int n) { int s = 0; for (int i = 0; i < n; ++i) s += square(i); return s; }
)";

/// Objects built every way the extractor must tell apart, plus a database.
class ExtractTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    writeFile(*dir_ / "src.c", kSource);
    compile("good.o", {"-O2", "-Xclang", "-fembed-bitcode=all"});
    compile("sub/good2.o", {"-Os", "-Xclang", "-fembed-bitcode=all"});
    compile("driver.o", {"-O2", "-fembed-bitcode=all"});
    compile("marker.o", {"-O2", "-fembed-bitcode=marker"});
    compile("plain.o", {"-O2"});
    writeFile(*dir_ / "junk.o", "this is not an object file\n");
    std::string entries;
    for (const char* object : {"good.o", "sub/good2.o", "driver.o", "marker.o", "plain.o", "junk.o",
                               "missing.o", "good.o"})
      entries += fmt::format(
          R"({{"directory": "{}", "file": "src.c", "command": "clang -c src.c -o {}"}},)",
          dir_->path().string(), object);
    entries += fmt::format(R"({{"directory": "{}", "file": "src.c", "command": "clang -E src.c"}})",
                           dir_->path().string());
    writeFile(*dir_ / "compile_commands.json", "[" + entries + "]");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static void compile(const std::string& object, std::vector<std::string> flags) {
    std::filesystem::create_directories((*dir_ / object).parent_path());
    flags.insert(flags.end(), {"-c", (*dir_ / "src.c").string(), "-o", (*dir_ / object).string()});
    ASSERT_EQ(testing::run(MLGO_CLANG, flags), 0) << object;
  }

  ExtractOptions options(const std::string& out) const {
    ExtractOptions o;
    o.input = *dir_ / "compile_commands.json";
    o.outputDir = *dir_ / out;
    o.numWorkers = 2;
    return o;
  }

  static TempDir* dir_;
};
TempDir* ExtractTest::dir_ = nullptr;

TEST_F(ExtractTest, ReadsTheSectionsInProcess) {
  Result<EmbeddedModule> module = readEmbeddedModule(*dir_ / "good.o");
  ASSERT_TRUE(module.ok()) << module.error().message();
  EXPECT_TRUE(module->bitcode.starts_with("BC\xC0\xDE"));
  EXPECT_TRUE(module->command.starts_with(std::string_view("-cc1\0", 5)));
}

TEST_F(ExtractTest, EachBadObjectHasItsOwnProblemAndMessage) {
  struct Case {
    const char* object;
    ObjectProblem problem;
    const char* text;
  };
  for (const Case& c :
       {Case{"driver.o", ObjectProblem::kPostOptimisation, "driver-level -fembed-bitcode=all"},
        Case{"marker.o", ObjectProblem::kMarkerOnly, "-fembed-bitcode=marker"},
        Case{"plain.o", ObjectProblem::kNoEmbeddedBitcode, "no embedded bitcode"},
        Case{"junk.o", ObjectProblem::kNotAnObject, "is not an object file"},
        Case{"missing.o", ObjectProblem::kMissing, "does not exist"},
        Case{"sub", ObjectProblem::kUnreadable, "cannot read object file"}}) {
    ObjectProblem problem = ObjectProblem::kWriteFailed;
    Result<EmbeddedModule> module = readEmbeddedModule(*dir_ / c.object, &problem);
    ASSERT_FALSE(module.ok()) << c.object;
    EXPECT_EQ(problem, c.problem) << c.object;
    EXPECT_THAT(module.error().message(), HasSubstr(c.text)) << c.object;
  }
}

TEST_F(ExtractTest, ContinuesPastBadObjectsAndReportsThem) {
  std::atomic<std::size_t> calls{0};
  std::size_t lastTotal = 0;
  Result<ExtractSummary> summary =
      extractCorpus(options("out"), [&](std::size_t done, std::size_t total) {
        ++calls;
        EXPECT_LE(done, total);
        lastTotal = total;
      });
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->objects, 9u);
  EXPECT_EQ(calls.load(), 9u);
  EXPECT_EQ(lastTotal, 9u);
  EXPECT_THAT(summary->modules, ElementsAre("good.o", "sub/good2.o"));
  std::map<std::string, ObjectProblem> skipped;
  for (const ObjectIssue& issue : summary->skipped)
    skipped[issue.object.filename().string() +
            (issue.problem == ObjectProblem::kDuplicate ? "#dup" : "")] = issue.problem;
  EXPECT_EQ(skipped["driver.o"], ObjectProblem::kPostOptimisation);
  EXPECT_EQ(skipped["marker.o"], ObjectProblem::kMarkerOnly);
  EXPECT_EQ(skipped["plain.o"], ObjectProblem::kNoEmbeddedBitcode);
  EXPECT_EQ(skipped["junk.o"], ObjectProblem::kNotAnObject);
  EXPECT_EQ(skipped["missing.o"], ObjectProblem::kMissing);
  EXPECT_EQ(skipped["good.o#dup"], ObjectProblem::kDuplicate);
  EXPECT_EQ(skipped["src.c"], ObjectProblem::kNoOutputInCommand);
  EXPECT_EQ(summary->skipped.size(), 7u);

  // The result is a corpus whose files are the sections.
  Result<Corpus> corpus = Corpus::open(*dir_ / "out");
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  ASSERT_EQ(corpus->modules().size(), 2u);
  Result<EmbeddedModule> good = readEmbeddedModule(*dir_ / "good.o");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(testing::readFile(*dir_ / "out/good.o.bc"), good->bitcode);
  EXPECT_EQ(testing::readFile(*dir_ / "out/good.o.cmd"), good->command);
  EXPECT_EQ(summary->bitcodeBytes, corpus->totalBitcodeBytes());
}

TEST_F(ExtractTest, CmdFilterKeepsMatchingModules) {
  ExtractOptions o = options("filtered");
  o.cmdFilter = "^-Os$";
  Result<ExtractSummary> summary = extractCorpus(o);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_THAT(summary->modules, ElementsAre("sub/good2.o"));
  bool sawFiltered = false;
  for (const ObjectIssue& issue : summary->skipped)
    sawFiltered |=
        issue.problem == ObjectProblem::kFilteredOut && issue.object.filename() == "good.o";
  EXPECT_TRUE(sawFiltered);
}

TEST_F(ExtractTest, DirectoryInput) {
  ExtractOptions o = options("fromdir");
  o.input = dir_->path();
  o.inputType = InputType::kDirectory;
  o.numWorkers = 1;
  Result<ExtractSummary> summary = extractCorpus(o);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_THAT(summary->modules, ElementsAre("good.o", "sub/good2.o"));
}

TEST_F(ExtractTest, WholeRunErrors) {
  ExtractOptions badRegex = options("x");
  badRegex.cmdFilter = "(";
  Result<ExtractSummary> regex = extractCorpus(badRegex);
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(regex.error().message(), HasSubstr("--cmd_filter"));

  ExtractOptions thinFilter = options("x");
  thinFilter.thinLto = ThinLtoBuild::kLocal;
  thinFilter.cmdFilter = "-O2";
  Result<ExtractSummary> thin = extractCorpus(thinFilter);
  ASSERT_FALSE(thin.ok());
  EXPECT_EQ(thin.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(thin.error().message(), HasSubstr("--thinlto_build=local"));

  ExtractOptions missing = options("x");
  missing.input = *dir_ / "nope.json";
  Result<ExtractSummary> noInput = extractCorpus(missing);
  ASSERT_FALSE(noInput.ok());
  EXPECT_EQ(noInput.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(noInput.error().message(), HasSubstr("compilation database"));

  writeFile(*dir_ / "bad.json", "[{\"directory\": ");
  ExtractOptions malformed = options("x");
  malformed.input = *dir_ / "bad.json";
  Result<ExtractSummary> bad = extractCorpus(malformed);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kParse);

  writeFile(*dir_ / "file-not-dir", "");
  ExtractOptions unwritable = options("file-not-dir/out");
  Result<ExtractSummary> noOutput = extractCorpus(unwritable);
  ASSERT_FALSE(noOutput.ok());
  EXPECT_EQ(noOutput.error().code(), ErrorCode::kIo);
  EXPECT_THAT(noOutput.error().message(), HasSubstr("output directory"));
}

} // namespace
} // namespace mlgo::corpus
