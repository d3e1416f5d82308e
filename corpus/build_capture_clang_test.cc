//===- corpus/build_capture_clang_test.cc - corpus build with clang-22 ----===//
///
/// Runs `make` on a tiny C + C++ Makefile project through captureBuild:
/// every compile is recorded and extracted, the recompiles reproduce the
/// objects' executable sections, configure-style checks in deleted
/// directories are left out, and a ThinLTO build (lld-22) gives a ThinLTO
/// corpus. Bad input: an empty command, a compiler that does not exist, a
/// failing build.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/build_capture.h"
#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/corpus_info.h"

#include "object_sections.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;
using ::testing::UnorderedElementsAre;
using testing::writeFile;

constexpr std::string_view kMakefile = R"(
all: prog
prog: obj/a.o obj/lib/b.o obj/c.o
	$(CXX) $^ -o $@
obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) -Oz -c $< -o $@
obj/%.o: src/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -Oz -c $< -o $@
check:
	mkdir -p conftest.dir && cd conftest.dir && echo 'int x;' > t.c && $(CC) -c t.c && cd .. && rm -rf conftest.dir
fail: obj/a.o
	false
)";

void writeProject(const fs::path& dir) {
  writeFile(dir / "Makefile", kMakefile);
  writeFile(dir / "src/a.c", "int helper(int);\nstatic int sq(int x) { return x * x; }\n"
                             "int twice(int x);\nint main(int c, char **v) { (void)v; "
                             "return helper(c) + sq(c) + twice(c); }\n");
  writeFile(dir / "src/lib/b.c", "static int inc(int x) { return x + 1; }\n"
                                 "int helper(int x) { int s = 0; for (int i = 0; i < x; ++i) "
                                 "s += inc(i); return s; }\n");
  writeFile(dir / "src/c.cpp", "template <class T> static T add(T a, T b) { return a + b; }\n"
                               "extern \"C\" int twice(int x) { return add(x, x); }\n");
}

/// Runs `make TARGET` in `dir` through captureBuild.
Result<BuildCaptureSummary> capture(const fs::path& dir, const std::string& target,
                                    ThinLtoBuild thinLto = ThinLtoBuild::kNone) {
  BuildCaptureOptions options;
  options.command = {"make", "-s", "-C", dir.string(), target};
  options.cc = MLGO_CLANG;
  options.cxx = fs::path(MLGO_CLANG).parent_path() / "clang++";
  options.extract.outputDir = dir / "corpus";
  options.extract.numWorkers = 2;
  options.extract.thinLto = thinLto;
  if (thinLto == ThinLtoBuild::kLocal)
    options.extract.commandOverride = std::vector<std::string>{"-Oz", "-c"};
  return captureBuild(options);
}

TEST(CaptureBuild, ExtractsEveryCompileOfAMakefileProject) {
  TempDir dir;
  writeProject(dir.path());
  writeFile(dir / "corpus/.mlgo-corpus-build/records/stale", "left by an interrupted run");
  Result<BuildCaptureSummary> summary = capture(dir.path(), "all");
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_FALSE(fs::exists(dir / "corpus/.mlgo-corpus-build")); // wrappers and records gone
  EXPECT_EQ(summary->buildExitCode, 0);
  EXPECT_EQ(summary->compiles, 3u);
  EXPECT_TRUE(fs::exists(summary->database));
  EXPECT_THAT(summary->extract.modules, UnorderedElementsAre("obj/a.o", "obj/lib/b.o", "obj/c.o"));
  EXPECT_TRUE(summary->extract.skipped.empty());
  EXPECT_TRUE(fs::exists(dir / "prog")); // the build itself still links

  Result<Corpus> corpus = Corpus::open(dir / "corpus");
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  for (const ModuleSpec& module : corpus->modules()) {
    EXPECT_THAT(module.args, ::testing::Contains("-Oz")) << module.name;
    fs::path again = dir / "again.o";
    Result<std::vector<std::string>> args = recompileArgs(module, again);
    ASSERT_TRUE(args.ok());
    ASSERT_EQ(testing::run(MLGO_CLANG, *args), 0) << module.name;
    auto original = testing::executableSections(dir / module.name);
    auto recompiled = testing::executableSections(again);
    ASSERT_TRUE(original && recompiled);
    EXPECT_FALSE(original->at(".text").empty());
    EXPECT_EQ(*original, *recompiled) << module.name;
  }
}

TEST(CaptureBuild, LeavesOutCompilesInDirectoriesThatAreGone) {
  TempDir dir;
  writeProject(dir.path());
  Result<BuildCaptureSummary> summary = capture(dir.path(), "check");
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->compiles, 0u);
  EXPECT_EQ(summary->vanished, 1u);
}

TEST(CaptureBuild, ThinLtoBuildGivesAThinLtoCorpus) {
  TempDir dir;
  writeProject(dir.path());
  Result<BuildCaptureSummary> summary = capture(dir.path(), "all", ThinLtoBuild::kLocal);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->buildExitCode, 0);
  EXPECT_THAT(summary->extract.modules, UnorderedElementsAre("obj/a.o", "obj/lib/b.o", "obj/c.o"));
  Result<CorpusInfo> info = inspectCorpus(dir / "corpus");
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->hasThinLto);
  EXPECT_TRUE(info->problems.empty()) << formatCorpusInfo(*info);
}

TEST(CaptureBuild, BadInput) {
  TempDir dir;
  writeProject(dir.path());
  BuildCaptureOptions options;
  options.extract.outputDir = dir / "corpus";
  Result<BuildCaptureSummary> empty = captureBuild(options);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kInvalidArgument);

  options.command = {"true"};
  options.cc = dir / "no-such-clang";
  Result<BuildCaptureSummary> noCompiler = captureBuild(options);
  ASSERT_FALSE(noCompiler.ok());
  EXPECT_EQ(noCompiler.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(noCompiler.error().message(), HasSubstr("no-such-clang"));

  options.cc = MLGO_CLANG;
  options.command = {"no-such-build-tool-xyz"};
  Result<BuildCaptureSummary> noTool = captureBuild(options);
  ASSERT_FALSE(noTool.ok());
  EXPECT_THAT(noTool.error().message(), HasSubstr("no-such-build-tool-xyz"));

  // A failing build: what it compiled is extracted, the exit code kept.
  Result<BuildCaptureSummary> failed = capture(dir.path(), "fail");
  ASSERT_TRUE(failed.ok()) << failed.error().message();
  EXPECT_NE(failed->buildExitCode, 0);
  EXPECT_THAT(failed->extract.modules, UnorderedElementsAre("obj/a.o"));
}

} // namespace
} // namespace mlgo::corpus
