//===- tests/corpus_layouts_clang_test.cc - corpora from real builds ------===//
///
/// The layouts of support/corpus_layouts.h, extracted: module names, each
/// recompile reproducing its object's executable sections byte for byte
/// (not for ThinLTO, whose objects are bitcode; there each module's index is
/// passed with -fthinlto-index= and the recompile succeeds). Bad inputs:
/// missing objects, objects without .llvmbc, a ThinLTO module without its
/// index, overrides with "<UNSPECIFIED>". What each ThinLTO module imported
/// (from its index), and an index that is not the module's.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/corpus_info.h"
#include "support/corpus_layouts.h"
#include "thinlto_imports.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using testing::CorpusLayouts;
using ::testing::HasSubstr;
using testing::quote;
using testing::TempDir;
using ::testing::UnorderedElementsAre;
using testing::writeFile;

TEST_F(CorpusLayouts, CMakeDatabaseNamesObjectsInsideTheBuildDirectory) {
  ASSERT_TRUE(ensure("cmake")) << *setupError_;
  EXPECT_THAT(moduleNames("cmake"),
              UnorderedElementsAre(
                  "CMakeFiles/cprog.dir/src/main.c.o", "CMakeFiles/cprog.dir/src/list.c.o",
                  "CMakeFiles/cprog.dir/src/util/strutil.c.o",
                  "CMakeFiles/cxxprog.dir/src/app.cpp.o", "CMakeFiles/cxxprog.dir/src/geom.cpp.o"));
  EXPECT_TRUE(layout("cmake").summary.skipped.empty());
  EXPECT_TRUE(layout("cmake").summary.notes.empty());
  expectRecompileReproducesText("cmake");
}

TEST_F(CorpusLayouts, AbsoluteOutputsAreNamedRelativeToTheirCommonRoot) {
  ASSERT_TRUE(ensure("abs")) << *setupError_;
  EXPECT_THAT(moduleNames("abs"), UnorderedElementsAre("c/main.o", "c/list.o", "c/util/strutil.o",
                                                       "cxx/app.o", "cxx/geom.o"));
  const ExtractSummary& summary = layout("abs").summary;
  EXPECT_TRUE(summary.skipped.empty());
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_THAT(summary.notes[0], HasSubstr((*dir_ / "objs").string()));
  expectRecompileReproducesText("abs");
}

TEST_F(CorpusLayouts, ResponseFilesAndMissingOutputs) {
  ASSERT_TRUE(ensure("rsp")) << *setupError_;
  EXPECT_THAT(moduleNames("rsp"), UnorderedElementsAre("main.o", "sub/list.o", "geom.o"));
  EXPECT_TRUE(layout("rsp").summary.skipped.empty());
  expectRecompileReproducesText("rsp");
}

TEST_F(CorpusLayouts, ThinLtoLocalPairsEachModuleWithItsIndex) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  Result<Corpus> corpus = Corpus::open(layout("thin").corpus);
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  EXPECT_TRUE(corpus->hasThinLto());
  std::set<std::string> names;
  TempDir out;
  for (const ModuleSpec& module : corpus->modules()) {
    names.insert(module.name);
    ASSERT_TRUE(module.thinLtoIndexPath) << module.name;
    EXPECT_TRUE(fs::exists(*module.thinLtoIndexPath));
    Result<std::vector<std::string>> args = recompileArgs(module, out / "x.o");
    ASSERT_TRUE(args.ok());
    EXPECT_THAT(*args, ::testing::Contains("-fthinlto-index=" + module.thinLtoIndexPath->string()));
    fs::path log = out / "log";
    EXPECT_EQ(testing::run(MLGO_CLANG, *args, log.string()), 0) << testing::readFile(log);
    auto sections = testing::executableSections(out / "x.o");
    ASSERT_TRUE(sections) << module.name;
    EXPECT_FALSE(sections->at(".text").empty()) << module.name;
  }
  EXPECT_THAT(names, UnorderedElementsAre("main.o", "list.o", "strutil.o", "app.o", "geom.o"));
  Result<CorpusInfo> info = inspectCorpus(layout("thin").corpus);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->hasThinLto);
  EXPECT_TRUE(info->problems.empty());
}

TEST_F(CorpusLayouts, ThinLtoImportsAreCountedFromEachModulesIndex) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  fs::path corpus = layout("thin").corpus;
  std::map<std::string, std::size_t> imported;
  for (std::string name : {"main.o", "list.o", "strutil.o", "app.o", "geom.o"}) {
    Result<std::size_t> count = detail::countImportedFunctions(corpus / (name + ".bc"),
                                                               corpus / (name + ".thinlto.bc"));
    ASSERT_TRUE(count.ok()) << name << ": " << count.error().message();
    imported[name] = *count;
  }
  // main.c calls list_sum, list_max (list.c), parse_int, count_digits (strutil.c);
  // app.cpp calls area and Point::norm2 (geom.cpp); the others call nothing outside.
  EXPECT_GE(imported["main.o"], 4u);
  EXPECT_GE(imported["app.o"], 2u);
  EXPECT_EQ(imported["list.o"], 0u);
  EXPECT_EQ(imported["strutil.o"], 0u);
  EXPECT_EQ(imported["geom.o"], 0u);
  Result<CorpusInfo> info = inspectCorpus(corpus);
  ASSERT_TRUE(info.ok());
  ASSERT_TRUE(info->imports);
  EXPECT_EQ(info->imports->modulesCounted, 5u);
  EXPECT_EQ(info->imports->importing, 2u);
  EXPECT_EQ(info->imports->functions, imported["main.o"] + imported["app.o"]);
  EXPECT_EQ(info->imports->mostModule,
            imported["main.o"] >= imported["app.o"] ? "main.o" : "app.o");
  EXPECT_THAT(formatCorpusInfo(*info), HasSubstr("ThinLTO imports: 2 of 5 modules"));

  // A module defining list_sum (summarised under list.o in main.o's index) and
  // parse_int (under strutil.o): no module of that index is its own.
  fs::path both = *dir_ / "both";
  if (!sh(both, fmt::format("printf 'int list_sum(const int *x, int n) {{ return n; }}\\n"
                            "int parse_int(const char *s) {{ return *s; }}\\n' > both.c && "
                            "{} -Oz -c -emit-llvm both.c -o both.bc",
                            compiler(false))))
    FAIL() << *setupError_;
  Result<std::size_t> mismatched =
      detail::countImportedFunctions(both / "both.bc", corpus / "main.o.thinlto.bc");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.error().code(), ErrorCode::kParse);
  EXPECT_THAT(mismatched.error().message(), HasSubstr("not that module's index"));
  Result<std::size_t> missing =
      detail::countImportedFunctions(corpus / "main.o.bc", both / "nope.thinlto.bc");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kIo);
}

/// Plays every module of `corpus` with clang's own inlining decisions.
TEST_F(CorpusLayouts, BadObjectsAreListedAndTheRestExtracted) {
  ASSERT_TRUE(ensure("abs")) << *setupError_;
  fs::path bad = *dir_ / "bad";
  if (!sh(proj(), fmt::format("mkdir -p {0} && {1} -Oz -Iinclude -c src/list.c -o {0}/plain.o",
                              quote(bad.string()), compiler(false))))
    FAIL() << *setupError_;
  std::string json;
  for (const fs::path& object : {*dir_ / "objs/c/main.o", bad / "plain.o", bad / "gone.o"})
    json += fmt::format(R"({}{{"directory": "{}", "command": "cc -c x.c -o {}"}})",
                        json.empty() ? "" : ",", bad.string(), object.string());
  json += fmt::format(R"(,{{"directory": "{}", "command": "cc x.o -o prog"}})", bad.string());
  writeFile(bad / "db.json", "[" + json + "]");
  ExtractOptions options;
  options.input = bad / "db.json";
  options.outputDir = bad / "corpus";
  Result<ExtractSummary> summary = extractCorpus(options);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->modules.size(), 1u);
  std::map<ObjectProblem, std::string> problems;
  for (const ObjectIssue& issue : summary->skipped)
    problems[issue.problem] = issue.message;
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[ObjectProblem::kNoEmbeddedBitcode], HasSubstr("plain.o"));
  EXPECT_THAT(problems[ObjectProblem::kMissing], HasSubstr("gone.o"));
  EXPECT_THAT(problems[ObjectProblem::kNoOutputInCommand], HasSubstr("no -c"));
}

TEST_F(CorpusLayouts, ThinLtoModulesWithoutTheirFilesAreListed) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  fs::path thin = *dir_ / "thin", bad = *dir_ / "thin-bad";
  fs::create_directories(bad);
  for (const char* file : {"main.o", "main.o.3.import.bc", "main.o.thinlto.bc", "list.o",
                           "list.o.3.import.bc", "strutil.o"})
    fs::copy_file(thin / file, bad / file, fs::copy_options::overwrite_existing);
  ExtractOptions options;
  options.input = bad;
  options.inputType = InputType::kDirectory;
  options.thinLto = ThinLtoBuild::kLocal;
  options.outputDir = bad / "corpus";
  Result<ExtractSummary> summary = extractCorpus(options);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_THAT(summary->modules, ::testing::ElementsAre("main.o"));
  ASSERT_EQ(summary->skipped.size(), 1u); // strutil.o has no import file: never listed
  EXPECT_EQ(summary->skipped[0].problem, ObjectProblem::kNoThinLtoIndex);
  EXPECT_THAT(summary->skipped[0].message, HasSubstr("list.o.thinlto.bc"));
  EXPECT_THAT(summary->skipped[0].message, HasSubstr("--thinlto-emit-index-files"));
  // Without an override the placeholder is written, and refused on use.
  ASSERT_EQ(summary->notes.size(), 1u);
  EXPECT_THAT(summary->notes[0], HasSubstr("<UNSPECIFIED>"));
  Result<Corpus> corpus = Corpus::open(options.outputDir);
  ASSERT_FALSE(corpus.ok());
  EXPECT_THAT(corpus.error().message(), HasSubstr("<UNSPECIFIED>"));

  // Through the database, the object never linked is missing its import file.
  std::string json = fmt::format(
      R"([{{"directory": "{0}", "arguments": ["cc", "-c", "a.c", "-o", "main.o"]}},
          {{"directory": "{0}", "arguments": ["cc", "-c", "a.c", "-o", "strutil.o"]}}])",
      bad.string());
  writeFile(bad / "db.json", json);
  options.input = bad / "db.json";
  options.inputType = InputType::kJson;
  options.commandOverride = std::vector<std::string>{"-Oz", "<UNSPECIFIED>"};
  Result<ExtractSummary> refused = extractCorpus(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("<UNSPECIFIED>"));
  options.commandOverride = std::vector<std::string>{"-Oz", "-c"};
  summary = extractCorpus(options);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_THAT(summary->modules, ::testing::ElementsAre("main.o"));
  ASSERT_EQ(summary->skipped.size(), 1u);
  EXPECT_EQ(summary->skipped[0].problem, ObjectProblem::kNoThinLtoBitcode);
  EXPECT_THAT(summary->skipped[0].message, HasSubstr("--save-temps=import"));
}

} // namespace
} // namespace mlgo::corpus
