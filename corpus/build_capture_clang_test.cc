//===- corpus/build_capture_clang_test.cc - corpus build with clang-22 ----===//
///
/// Runs `make` on a tiny C + C++ Makefile project through captureBuild:
/// every compile is recorded and extracted, the recompiles reproduce the
/// objects' executable sections, configure-style checks in deleted
/// directories or inside CMakeFiles/ are left out, a compile of several
/// sources gives a module each and a response file the build deletes (as
/// Ninja does) is recorded, and a ThinLTO build (lld-22) gives a ThinLTO
/// corpus. A Makefile that names its own compilers (CC=gcc, CXX=g++, `cc`,
/// gcc-12, clang++-14, <machine>-linux-gnu-gcc) is caught through the
/// shims on PATH, each name with its role; one calling clang by absolute
/// path, or a build already up to date, compiles nothing through the
/// wrappers and gets hints saying why. Bad input: an empty command, a
/// compiler that does not exist, a failing build.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/build_capture.h"
#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/compile_entry.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/corpus_info.h"

#include "object_sections.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <map>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
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
ltocheck:
	mkdir -p CMakeFiles/_CMakeLTOTest-C/bin && cd CMakeFiles/_CMakeLTOTest-C/bin && echo 'int main(void) { return 0; }' > main.c && $(CC) -c main.c
checks: check ltocheck
archive: obj/a.o obj/lib/b.o obj/c.o
	ar cr obj/libb.a obj/lib/b.o && ranlib obj/libb.a && ar --version > obj/ar-version
	nm obj/lib/b.o > obj/b.symbols
	$(CXX) obj/a.o obj/c.o -Lobj -lb -o prog2
fail: obj/a.o
	false
styles:
	mkdir -p multi && cd multi && $(CC) -Oz -c ../src/a.c ../src/lib/b.c
	printf '%s\n' '-Oz -c src/lib/b.c' '-o obj/rsp-b.o' > b.rsp && mkdir -p obj
	$(CC) @b.rsp && rm b.rsp
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

// Objects carrying bitcode in a static archive: GNU ar indexes them through
// /usr/lib/bfd-plugins, where an older LLVMgold (Debian's llvm-14, on this
// machine) leaves the index empty and the link fails; the build's `ar` is
// LLVM's.
TEST(CaptureBuild, StaticArchivesOfBitcodeCarryingObjectsLink) {
  TempDir dir;
  writeProject(dir.path());
  Result<BuildCaptureSummary> summary = capture(dir.path(), "archive");
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->buildExitCode, 0);
  EXPECT_TRUE(fs::exists(dir / "prog2"));
  EXPECT_THAT(testing::readFile(dir / "obj/ar-version"), HasSubstr("LLVM"));
  EXPECT_THAT(testing::readFile(dir / "obj/b.symbols"), HasSubstr("T helper"));
  EXPECT_EQ(summary->compiles, 3u);
}

TEST(CaptureBuild, LeavesOutConfigureChecks) {
  TempDir dir;
  writeProject(dir.path());
  // One in a directory that is gone, one inside CMakeFiles/ (it stays).
  Result<BuildCaptureSummary> summary = capture(dir.path(), "checks");
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_TRUE(fs::exists(dir / "CMakeFiles/_CMakeLTOTest-C/bin/main.o"));
  EXPECT_EQ(summary->compiles, 0u);
  EXPECT_EQ(summary->vanished, 2u);
}

TEST(CaptureBuild, SeveralSourcesPerCompileAndDeletedResponseFiles) {
  TempDir dir;
  writeProject(dir.path());
  Result<BuildCaptureSummary> summary = capture(dir.path(), "styles");
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->buildExitCode, 0);
  EXPECT_FALSE(fs::exists(dir / "b.rsp"));
  EXPECT_EQ(summary->compiles, 2u);
  EXPECT_THAT(summary->extract.modules, UnorderedElementsAre("a.o", "b.o", "obj/rsp-b.o"));
  EXPECT_TRUE(summary->extract.skipped.empty());
  // The database holds the deleted file's words, so the compile is found again.
  Result<std::vector<ModuleCompile>> compiles =
      moduleCompiles(testing::readFile(summary->database), "db");
  ASSERT_TRUE(compiles.ok()) << compiles.error().message();
  std::map<std::string, std::vector<std::string>> args;
  for (const ModuleCompile& c : *compiles)
    args[c.module] = std::vector<std::string>(c.arguments.begin() + 1, c.arguments.end());
  EXPECT_THAT(args["obj/rsp-b.o"], ::testing::ElementsAre("-Oz", "-c", "src/lib/b.c"));
  EXPECT_THAT(args["b.o"], ::testing::ElementsAre("-Oz", "-c", "../src/lib/b.c"));
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

/// A Makefile that names its compilers itself; nothing uses $CC/$CXX from
/// the environment.
constexpr std::string_view kNamedCompilersMakefile = R"(
CC = gcc
CXX = g++
OBJS = obj/a.o obj/b.o obj/c.o obj/d.o obj/e.o obj/f.o
prog: $(OBJS)
	$(CXX) $(OBJS) -o $@
obj/a.o: src/a.c
	@mkdir -p obj
	$(CC) -Oz -c src/a.c -o $@
obj/b.o: src/b.c
	@mkdir -p obj
	cc -O1 -c src/b.c -o $@
obj/c.o: src/c.cpp
	@mkdir -p obj
	$(CXX) -Oz -c src/c.cpp -o $@
obj/d.o: src/d.cpp
	@mkdir -p obj
	clang++-14 -O2 -c src/d.cpp -o $@
obj/e.o: src/e.c
	@mkdir -p obj
	gcc-12 -O2 -c src/e.c -o $@
obj/f.o: src/f.c
	@mkdir -p obj
	$(shell uname -m)-linux-gnu-gcc -Os -c src/f.c -o $@
)";

void writeNamedCompilersProject(const fs::path& dir) {
  writeFile(dir / "Makefile", kNamedCompilersMakefile);
  writeFile(dir / "src/a.c", "int b(int); int c(int); int d(int); int e(int); int f(int);\n"
                             "int main(int n, char **v) { (void)v; "
                             "return b(n) + c(n) + d(n) + e(n) + f(n); }\n");
  writeFile(dir / "src/b.c", "int b(int x) { return x * 3; }\n");
  writeFile(dir / "src/c.cpp", "template <class T> T twice(T x) { return x + x; }\n"
                               "extern \"C\" int c(int x) { return twice(x); }\n");
  writeFile(dir / "src/d.cpp", "#include <vector>\n"
                               "extern \"C\" int d(int x) { std::vector<int> v(x, 1); "
                               "return (int)v.size(); }\n");
  writeFile(dir / "src/e.c", "static int sq(int x) { return x * x; }\n"
                             "int e(int x) { return sq(x) - 1; }\n");
  writeFile(dir / "src/f.c", "int f(int x) { return x ^ 5; }\n");
}

/// Runs `make -s -C dir` through captureBuild (nothing else on make's
/// command line).
Result<BuildCaptureSummary> captureMake(const fs::path& dir) {
  BuildCaptureOptions options;
  options.command = {"make", "-s", "-C", dir.string()};
  options.cc = MLGO_CLANG;
  options.cxx = fs::path(MLGO_CLANG).parent_path() / "clang++";
  options.extract.outputDir = dir / "corpus";
  options.extract.numWorkers = 2;
  return captureBuild(options);
}

/// compile_commands.json's entries: source (last argument) -> argv[0].
std::map<std::string, std::string> compilerOfEachSource(const fs::path& database) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(testing::readFile(database));
  std::map<std::string, std::string> compilers;
  if (!json) {
    llvm::consumeError(json.takeError());
    return compilers;
  }
  for (const llvm::json::Value& entry : *json->getAsArray()) {
    const llvm::json::Array* args = entry.getAsObject()->getArray("arguments");
    std::string source;
    for (const llvm::json::Value& arg : *args)
      if (arg.getAsString()->starts_with("src/"))
        source = arg.getAsString()->str();
    compilers[source] = (*args)[0].getAsString()->str();
  }
  return compilers;
}

TEST(CaptureBuild, CatchesCompilersTheMakefileNamesItself) {
  TempDir dir;
  writeNamedCompilersProject(dir.path());
  Result<BuildCaptureSummary> summary = captureMake(dir.path());
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->buildExitCode, 0);
  EXPECT_EQ(summary->compiles, 6u);
  EXPECT_TRUE(summary->hints.empty());
  EXPECT_TRUE(fs::exists(dir / "prog")); // Linked through the g++ shim.
  EXPECT_FALSE(fs::exists(dir / "corpus/.mlgo-corpus-build"));

  std::vector<std::string> expected = {"obj/a.o", "obj/b.o", "obj/c.o",
                                       "obj/d.o", "obj/e.o", "obj/f.o"};
  EXPECT_THAT(summary->extract.modules, UnorderedElementsAre("obj/a.o", "obj/b.o", "obj/c.o",
                                                             "obj/d.o", "obj/e.o", "obj/f.o"));
  Result<Corpus> corpus = Corpus::open(dir / "corpus");
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  std::vector<std::string> names;
  for (const ModuleSpec& module : corpus->modules())
    names.push_back(module.name);
  EXPECT_THAT(names, UnorderedElementsAre("obj/a.o", "obj/b.o", "obj/c.o", "obj/d.o", "obj/e.o",
                                          "obj/f.o"));
  for (const std::string& name : expected) {
    std::string bitcode = testing::readFile(dir / "corpus" / (name + ".bc"));
    EXPECT_TRUE(bitcode.starts_with("BC\xc0\xde")) << name;
  }

  // Each name ran the real compiler of its role.
  std::string c = MLGO_CLANG, cxx = (fs::path(MLGO_CLANG).parent_path() / "clang++").string();
  std::map<std::string, std::string> compilers = compilerOfEachSource(summary->database);
  EXPECT_EQ(compilers, (std::map<std::string, std::string>{{"src/a.c", c},
                                                           {"src/b.c", c},
                                                           {"src/c.cpp", cxx},
                                                           {"src/d.cpp", cxx},
                                                           {"src/e.c", c},
                                                           {"src/f.c", c}}));
}

TEST(CaptureBuild, NothingCaughtSaysWhy) {
  // A compiler called by absolute path bypasses PATH.
  TempDir dir;
  writeProject(dir.path());
  writeFile(dir / "Makefile", fmt::format("obj/a.o: src/a.c\n\t@mkdir -p obj\n"
                                          "\t{} -Oz -c src/a.c -o obj/a.o\n",
                                          MLGO_CLANG));
  Result<BuildCaptureSummary> absolute = captureMake(dir.path());
  ASSERT_TRUE(absolute.ok()) << absolute.error().message();
  EXPECT_EQ(absolute->buildExitCode, 0);
  EXPECT_TRUE(fs::exists(dir / "obj/a.o")); // The build did compile, unseen.
  EXPECT_EQ(absolute->compiles, 0u);
  EXPECT_TRUE(absolute->extract.modules.empty());
  EXPECT_FALSE(fs::exists(dir / "corpus/corpus_description.json"));
  EXPECT_THAT(absolute->hints,
              Contains(AllOf(HasSubstr((dir / "Makefile").string()),
                             HasSubstr(fmt::format("by absolute path ({})", MLGO_CLANG)))));
  EXPECT_FALSE(fs::exists(dir / "corpus/.mlgo-corpus-build"));

  // A build that is up to date compiles nothing the second time.
  TempDir again;
  writeNamedCompilersProject(again.path());
  ASSERT_EQ(captureMake(again.path())->compiles, 6u);
  Result<BuildCaptureSummary> upToDate = captureMake(again.path());
  ASSERT_TRUE(upToDate.ok()) << upToDate.error().message();
  EXPECT_EQ(upToDate->compiles, 0u);
  EXPECT_TRUE(upToDate->database.empty());
  EXPECT_THAT(upToDate->hints, Contains(HasSubstr("up to date")));
  // The first run's corpus stays as it was.
  Result<Corpus> kept = Corpus::open(again / "corpus");
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  EXPECT_EQ(kept->modules().size(), 6u);
  EXPECT_TRUE(fs::exists(again / "corpus/compile_commands.json"));
  EXPECT_THAT(upToDate->hints, Not(Contains(HasSubstr("names a compiler by absolute path"))));
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

  // A compiler inside the scratch directory (a PATH left from another run)
  // would be deleted under the build.
  fs::path stale = dir / "corpus/.mlgo-corpus-build/bin/gcc";
  writeFile(stale, "#!/bin/sh\n");
  fs::permissions(stale, fs::perms::owner_all);
  options.cc = stale;
  Result<BuildCaptureSummary> inside = captureBuild(options);
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(inside.error().message(), HasSubstr("inside the scratch directory"));

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
