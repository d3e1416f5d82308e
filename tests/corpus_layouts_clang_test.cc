//===- tests/corpus_layouts_clang_test.cc - corpora from real builds ------===//
///
/// Builds one small C + C++ project (5 sources) with clang-22 under each
/// build layout `corpus extract` must handle, extracts a corpus from each,
/// and checks the module names, that recompiling each module reproduces its
/// original object's executable sections byte for byte (not for ThinLTO,
/// whose objects are bitcode), and that default-policy inlining episodes at
/// -Oz score reward 0 on an ordinary and a ThinLTO corpus (where both
/// register allocation problems also run). Layouts:
///   cmake    a CMake + Ninja build's compile_commands.json;
///   abs      `command` strings run in the source tree writing objects to
///            absolute paths elsewhere;
///   rsp      `arguments` with response files (one nested), `-o` missing;
///   thin     a ThinLTO build linked by lld-22 with --save-temps=import and
///            --thinlto-emit-index-files, extracted with --thinlto_build=local.
/// Bad inputs: missing objects, objects without .llvmbc, a ThinLTO module
/// without its index, overrides with "<UNSPECIFIED>". Each test builds only
/// the layouts it uses (ctest runs every test in its own process).
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/corpus_info.h"
#include "mlgo/corpus/extract.h"
#include "mlgo/env/environment.h"

#include "object_sections.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;
using ::testing::UnorderedElementsAre;
using testing::writeFile;

constexpr std::string_view kListH = R"(
int list_sum(const int *xs, int n);
int list_max(const int *xs, int n);
int parse_int(const char *s);
int count_digits(const char *s);
)";
constexpr std::string_view kListC = R"(
#include "list.h"
static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
int list_sum(const int *xs, int n) { int s = 0; for (int i = 0; i < n; ++i) s += clamp(xs[i], -100, 100); return s; }
int list_max(const int *xs, int n) { int m = xs[0]; for (int i = 1; i < n; ++i) if (xs[i] > m) m = xs[i]; return clamp(m, 0, 50); }
)";
constexpr std::string_view kStrutilC = R"(
#include "list.h"
static int is_digit(char c) { return c >= '0' && c <= '9'; }
int parse_int(const char *s) { int v = 0; while (is_digit(*s)) v = v * 10 + (*s++ - '0'); return v; }
int count_digits(const char *s) { int n = 0; for (; *s; ++s) n += is_digit(*s); return n; }
)";
constexpr std::string_view kMainC = R"(
#include "list.h"
int main(int argc, char **argv) {
  int xs[4] = {argc, 2, 3, 4};
  if (argc > 1) xs[1] = parse_int(argv[1]) + count_digits(argv[1]);
  return list_sum(xs, 4) + list_max(xs, 4);
}
)";
constexpr std::string_view kGeomH = R"(
struct Point { double x, y; double norm2() const; };
double area(const Point *ps, int n);
)";
constexpr std::string_view kGeomCpp = R"(
#include "geom.h"
namespace { template <typename T> T sq(T x) { return x * x; } }
double Point::norm2() const { return sq(x) + sq(y); }
double area(const Point *ps, int n) {
  double a = 0;
  for (int i = 0; i < n; ++i) { const Point &p = ps[i], &q = ps[(i + 1) % n]; a += p.x * q.y - q.x * p.y; }
  return a / 2;
}
)";
constexpr std::string_view kAppCpp = R"(
#include "geom.h"
template <typename T> static T twice(T v) { return v + v; }
struct Shape { Point ps[3]; double size() const { return area(ps, 3) + ps[1].norm2(); } };
int main(int argc, char **) { Shape s{{{0, 0}, {double(argc), 0}, {0, twice(2.0)}}}; return int(s.size()); }
)";

/// (source under proj/src, C++?) of the project.
const std::vector<std::pair<std::string, bool>> kSources = {{"main.c", false},
                                                            {"list.c", false},
                                                            {"util/strutil.c", false},
                                                            {"app.cpp", true},
                                                            {"geom.cpp", true}};

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

/// One extracted layout: where its corpus is and the object of each module.
struct Layout {
  fs::path corpus;
  std::map<std::string, fs::path> objects; ///< module name -> original object
  ExtractSummary summary;
};

class CorpusLayouts : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    layouts_ = new std::map<std::string, Layout>();
    writeProject();
  }
  static void TearDownTestSuite() {
    delete layouts_;
    delete dir_;
  }
  /// Builds and extracts `name` on first use (each test builds only the
  /// layouts it needs); false with setupError_ set when that fails.
  static bool ensure(const std::string& name) {
    if (layouts_->contains(name))
      return true;
    if (!setupError_->empty())
      return false;
    if (name == "cmake")
      return buildCmake();
    if (name == "abs")
      return buildAbsolute();
    if (name == "rsp")
      return buildResponseFiles();
    return buildThinLto();
  }

  static fs::path proj() { return *dir_ / "proj"; }

  static void writeProject() {
    writeFile(proj() / "include/list.h", kListH);
    writeFile(proj() / "include/geom.h", kGeomH);
    writeFile(proj() / "src/list.c", kListC);
    writeFile(proj() / "src/util/strutil.c", kStrutilC);
    writeFile(proj() / "src/main.c", kMainC);
    writeFile(proj() / "src/geom.cpp", kGeomCpp);
    writeFile(proj() / "src/app.cpp", kAppCpp);
  }

  /// Runs `script` with /bin/sh in `dir`; records a setup error on failure.
  static bool sh(const fs::path& dir, const std::string& script) {
    fs::create_directories(dir);
    fs::path log = *dir_ / "setup.log";
    if (testing::run("/bin/sh", {"-c", "cd " + quote(dir.string()) + " && " + script},
                     log.string()) == 0)
      return true;
    *setupError_ = "setup failed: " + script + "\n" + testing::readFile(log);
    return false;
  }

  static bool extract(const std::string& layout, ExtractOptions options,
                      std::map<std::string, fs::path> objects) {
    options.outputDir = *dir_ / ("corpus-" + layout);
    options.numWorkers = 2;
    Result<ExtractSummary> summary = extractCorpus(options);
    if (!summary) {
      *setupError_ = layout + ": " + summary.error().message();
      return false;
    }
    (*layouts_)[layout] = Layout{options.outputDir, std::move(objects), std::move(*summary)};
    return true;
  }

  static std::string compiler(bool cxx) { return cxx ? MLGO_CLANGXX : MLGO_CLANG; }

  static bool buildCmake() {
    writeFile(proj() / "CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.20)
project(layouts C CXX)
include_directories(include)
add_executable(cprog src/main.c src/list.c src/util/strutil.c)
add_executable(cxxprog src/app.cpp src/geom.cpp)
)");
    std::string flags = "-Oz -Xclang -fembed-bitcode=all";
    if (!sh(dir_->path(),
            "cmake -S proj -B cmake-build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "
            "-DCMAKE_C_COMPILER=" +
                compiler(false) + " -DCMAKE_CXX_COMPILER=" + compiler(true) + " '-DCMAKE_C_FLAGS=" +
                flags + "' '-DCMAKE_CXX_FLAGS=" + flags + "' && cmake --build cmake-build"))
      return false;
    std::map<std::string, fs::path> objects;
    for (const auto& [source, cxx] : kSources) {
      std::string name =
          fmt::format("CMakeFiles/{}.dir/src/{}.o", cxx ? "cxxprog" : "cprog", source);
      objects[name] = *dir_ / "cmake-build" / name;
    }
    ExtractOptions options;
    options.input = *dir_ / "cmake-build/compile_commands.json";
    return extract("cmake", options, objects);
  }

  /// `command` strings run in the source tree, objects at absolute paths.
  static bool buildAbsolute() {
    std::string entries;
    std::map<std::string, fs::path> objects;
    for (const auto& [source, cxx] : kSources) {
      std::string name = (cxx ? "cxx/" : "c/") + fs::path(source).replace_extension(".o").string();
      fs::path object = *dir_ / "objs" / name;
      std::string command =
          fmt::format("{} -Oz -Xclang -fembed-bitcode=all -Iinclude -c src/{} -o {}", compiler(cxx),
                      source, object.string());
      if (!sh(proj(), "mkdir -p " + quote(object.parent_path().string()) + " && " + command))
        return false;
      entries += fmt::format(R"({}{{"directory": "{}", "file": "src/{}", "command": "{}"}})",
                             entries.empty() ? "" : ",", proj().string(), source, command);
      objects[name] = object;
    }
    writeFile(*dir_ / "abs.json", "[" + entries + "]");
    ExtractOptions options;
    options.input = *dir_ / "abs.json";
    return extract("abs", options, objects);
  }

  /// `arguments` with response files; some entries without -o.
  static bool buildResponseFiles() {
    fs::path build = *dir_ / "rsp-build";
    std::string include = "-I" + (proj() / "include").string();
    writeFile(build / "flags/common.rsp", "-Oz -Xclang -fembed-bitcode=all\n" + include);
    writeFile(build / "flags/geom.rsp",
              "@flags/common.rsp -c " + (proj() / "src/geom.cpp").string() + " -o geom.o");
    struct Entry {
      std::string name;
      std::vector<std::string> args;
    };
    std::vector<Entry> entries = {
        {"main.o", {compiler(false), "@flags/common.rsp", "-c", (proj() / "src/main.c").string()}},
        {"sub/list.o",
         {compiler(false), "@flags/common.rsp", "-c", (proj() / "src/list.c").string(), "-o",
          "sub/list.o"}},
        {"geom.o", {compiler(true), "@flags/geom.rsp"}}};
    std::string json;
    std::map<std::string, fs::path> objects;
    for (const Entry& e : entries) {
      std::string command, arguments;
      for (const std::string& a : e.args) {
        command += quote(a) + " ";
        arguments += (arguments.empty() ? "" : ", ") + ("\"" + a + "\"");
      }
      if (!sh(build, "mkdir -p sub && " + command))
        return false;
      json += fmt::format(R"({}{{"directory": "{}", "arguments": [{}]}})", json.empty() ? "" : ",",
                          build.string(), arguments);
      objects[e.name] = build / e.name;
    }
    writeFile(*dir_ / "rsp.json", "[" + json + "]");
    ExtractOptions options;
    options.input = *dir_ / "rsp.json";
    return extract("rsp", options, objects);
  }

  static bool buildThinLto() {
    fs::path thin = *dir_ / "thin";
    std::string json, cobjs, cxxobjs;
    for (const auto& [source, cxx] : kSources) {
      fs::path object = thin / fs::path(source).filename().replace_extension(".o");
      std::string args =
          fmt::format(R"("{}", "-Oz", "-flto=thin", "-Iinclude", "-c", "src/{}", "-o", "{}")",
                      compiler(cxx), source, object.string());
      if (!sh(proj(), fmt::format("mkdir -p {} && {} -Oz -flto=thin -Iinclude -c src/{} -o {}",
                                  quote(thin.string()), compiler(cxx), source, object.string())))
        return false;
      json += fmt::format(R"({}{{"directory": "{}", "arguments": [{}]}})", json.empty() ? "" : ",",
                          proj().string(), args);
      (cxx ? cxxobjs : cobjs) += " " + object.string();
    }
    std::string link = fmt::format("-flto=thin -fuse-ld=lld --ld-path={} -Wl,--save-temps=import "
                                   "-Wl,--thinlto-emit-index-files",
                                   MLGO_LLD);
    if (!sh(thin, fmt::format("{} {}{} -o cprog && {} {}{} -o cxxprog", compiler(false), link,
                              cobjs, compiler(true), link, cxxobjs)))
      return false;
    writeFile(*dir_ / "thin.json", "[" + json + "]");
    ExtractOptions options;
    options.input = *dir_ / "thin.json";
    options.thinLto = ThinLtoBuild::kLocal;
    options.commandOverride = std::vector<std::string>{"-Oz", "-c"};
    return extract("thin", options, {});
  }

  /// The extracted layout; fails the test (throws from at()) if it was not
  /// built - tests ASSERT_TRUE(ensure(name)) first.
  static const Layout& layout(const std::string& name) { return layouts_->at(name); }

  static std::set<std::string> moduleNames(const std::string& layoutName) {
    Result<Corpus> corpus = Corpus::open(layout(layoutName).corpus);
    EXPECT_TRUE(corpus.ok()) << corpus.error().message();
    std::set<std::string> names;
    if (corpus.ok())
      for (const ModuleSpec& m : corpus->modules())
        names.insert(m.name);
    return names;
  }

  /// Recompiles every module; their executable sections must match.
  static void expectRecompileReproducesText(const std::string& layoutName) {
    const Layout& l = layout(layoutName);
    Result<Corpus> corpus = Corpus::open(l.corpus);
    ASSERT_TRUE(corpus.ok()) << corpus.error().message();
    TempDir out;
    for (const ModuleSpec& module : corpus->modules()) {
      fs::path recompiled = out / (std::to_string(&module - corpus->modules().data()) + ".o");
      Result<std::vector<std::string>> args = recompileArgs(module, recompiled);
      ASSERT_TRUE(args.ok()) << args.error().message();
      fs::path log = out / "log";
      ASSERT_EQ(testing::run(MLGO_CLANG, *args, log.string()), 0) << testing::readFile(log);
      auto original = testing::executableSections(l.objects.at(module.name));
      auto again = testing::executableSections(recompiled);
      ASSERT_TRUE(original && again) << module.name;
      ASSERT_FALSE(original->at(".text").empty()) << module.name;
      EXPECT_EQ(*original, *again) << layoutName << ": " << module.name;
    }
  }

  static TempDir* dir_;
  static std::map<std::string, Layout>* layouts_;
  static std::string* setupError_;
};
TempDir* CorpusLayouts::dir_ = nullptr;
std::map<std::string, Layout>* CorpusLayouts::layouts_ = nullptr;
std::string* CorpusLayouts::setupError_ = new std::string();

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

/// Plays every module of `corpus` with clang's own inlining decisions.
void expectDefaultInliningScoresZero(const fs::path& corpus, const fs::path& scratch) {
  env::EnvironmentOptions options;
  options.problem = "inlining";
  options.corpus = corpus;
  options.clang = MLGO_CLANG;
  options.cacheDir = scratch / "cache";
  options.jobs = 2;
  auto env = env::Environment::create(options);
  ASSERT_TRUE(env.ok()) << env.error().message();
  Result<Corpus> opened = Corpus::open(corpus);
  ASSERT_TRUE(opened.ok());
  std::size_t decided = 0;
  for (const ModuleSpec& module : opened->modules()) {
    auto reset = (*env)->reset({module.name, std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    env::StepResult step = reset->step;
    while (!step.terminated && !step.truncated) {
      ASSERT_TRUE(step.defaultAction);
      ASSERT_TRUE((*env)->step(reset->episode, *step.defaultAction, step).ok());
    }
    ASSERT_TRUE(step.summary);
    EXPECT_EQ(step.reward, 0.0) << module.name;
    EXPECT_GT(step.summary->defaultScore, 0) << module.name;
    decided += step.summary->observations > 0;
  }
  EXPECT_GT(decided, 0u) << "no module made an inlining decision";
}

TEST_F(CorpusLayouts, DefaultInliningScoresZeroOnAnOrdinaryCorpus) {
  ASSERT_TRUE(ensure("abs")) << *setupError_;
  expectDefaultInliningScoresZero(layout("abs").corpus, *dir_ / "env-abs");
}

TEST_F(CorpusLayouts, DefaultInliningScoresZeroOnAThinLtoCorpus) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  expectDefaultInliningScoresZero(layout("thin").corpus, *dir_ / "env-thin");
}

TEST_F(CorpusLayouts, RegisterAllocationEpisodesRunOnAThinLtoCorpus) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  for (const char* problem : {"regalloc", "regalloc-priority"}) {
    env::EnvironmentOptions options;
    options.problem = problem;
    options.corpus = layout("thin").corpus;
    options.clang = MLGO_CLANG;
    options.useDiskCache = false;
    options.jobs = 2;
    auto env = env::Environment::create(options);
    ASSERT_TRUE(env.ok()) << env.error().message();
    std::size_t observations = 0;
    for (const char* module : {"list.o", "geom.o"}) {
      auto reset = (*env)->reset({module, std::nullopt, {}});
      ASSERT_TRUE(reset.ok()) << problem << " " << module << ": " << reset.error().message();
      env::StepResult step = reset->step;
      while (!step.terminated && !step.truncated) {
        ASSERT_TRUE(step.fallbackAction);
        ASSERT_TRUE((*env)->step(reset->episode, *step.fallbackAction, step).ok());
      }
      ASSERT_TRUE(step.summary) << problem << " " << module;
      EXPECT_TRUE(std::isfinite(step.reward)) << problem << " " << module;
      observations += step.summary->observations;
    }
    if (std::string_view(problem) == "regalloc-priority")
      EXPECT_GT(observations, 0u); // every live range asks for a priority
  }
}

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
