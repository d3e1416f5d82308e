//===- tests/support/corpus_layouts.h - one project, four build layouts -*- C++ -*-===//
///
/// \file
/// Test fixture for corpus_layouts*_clang_test.cc: builds one small C + C++
/// project (5 sources) with clang-22 under each build layout `corpus extract`
/// must handle and extracts a corpus from each, on first use:
///   cmake    a CMake + Ninja build's compile_commands.json;
///   abs      `command` strings run in the source tree writing objects to
///            absolute paths elsewhere;
///   rsp      `arguments` with response files (one nested), `-o` missing;
///   thin     a ThinLTO build linked by lld-22 with --save-temps=import and
///            --thinlto-emit-index-files, extracted with --thinlto_build=local
///            and the override "-Oz -c".
/// Each test builds only the layouts it uses (ctest runs every test in its
/// own process). Test-only.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_CORPUS_LAYOUTS_H
#define MLGO_TESTS_SUPPORT_CORPUS_LAYOUTS_H

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/extract.h"

#include "object_sections.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlgo::corpus::testing {

namespace fs = std::filesystem;

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
inline const std::vector<std::pair<std::string, bool>> kSources = {{"main.c", false},
                                                                   {"list.c", false},
                                                                   {"util/strutil.c", false},
                                                                   {"app.cpp", true},
                                                                   {"geom.cpp", true}};

inline std::string quote(const std::string& s) {
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
    if (run("/bin/sh", {"-c", "cd " + quote(dir.string()) + " && " + script}, log.string()) == 0)
      return true;
    *setupError_ = "setup failed: " + script + "\n" + readFile(log);
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
      ASSERT_EQ(run(MLGO_CLANG, *args, log.string()), 0) << readFile(log);
      auto original = executableSections(l.objects.at(module.name));
      auto again = executableSections(recompiled);
      ASSERT_TRUE(original && again) << module.name;
      ASSERT_FALSE(original->at(".text").empty()) << module.name;
      EXPECT_EQ(*original, *again) << layoutName << ": " << module.name;
    }
  }

  static inline TempDir* dir_ = nullptr;
  static inline std::map<std::string, Layout>* layouts_ = nullptr;
  static inline std::string* setupError_ = new std::string();
};

} // namespace mlgo::corpus::testing

#endif // MLGO_TESTS_SUPPORT_CORPUS_LAYOUTS_H
