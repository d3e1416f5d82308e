//===- tests/optimized_ir_clang_test.cc - optimised IR against full compiles -===//
///
/// Register allocation episodes compile each module's cached optimised IR
/// (mlgo/env/optimized_ir_cache.h). On every module of the demo corpus's
/// -O2 variant, with the real clang-22:
///  - the object compiled from the optimised-IR twin has the executable
///    bytes of the full compile;
///  - default-policy (eviction) and fallback-policy (priority) episodes
///    score the same, per function and in total, on both paths (and, when
///    clang sends its own default eviction, reward 0);
///  - a second environment on the same cache reuses the entries (same file,
///    nothing built), a damaged entry is rebuilt, and the two paths never
///    share a baseline cache entry.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/command_line.h"
#include "mlgo/env/environment.h"
#include "mlgo/env/run_compile.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"
#include "object_sections.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

class OptimizedIrClang : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-optir-clang-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message();
    dir_ = std::move(*dir);
  }

  EnvironmentOptions options(const std::string& problem, const std::string& cache,
                             bool fullCompile) const {
    EnvironmentOptions o;
    o.problem = problem;
    o.clang = MLGO_CLANG;
    o.cacheDir = dir_.path() / cache;
    o.jobs = 2;
    o.fullCompile = fullCompile;
    return o;
  }

  std::unique_ptr<Environment> create(const EnvironmentOptions& o) {
    auto env = Environment::create(o);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  /// The executable sections of `module` compiled as it stands (no MLGO
  /// flags), or nullopt (and a test failure).
  std::optional<std::map<std::string, std::string>> compile(const corpus::ModuleSpec& module,
                                                            const std::string& name) {
    fs::path object = dir_.path() / name;
    auto args = corpus::recompileArgs(module, object);
    EXPECT_TRUE(args.ok());
    if (!args.ok())
      return std::nullopt;
    CompileCommand command;
    command.argv = {MLGO_CLANG};
    command.argv.insert(command.argv.end(), args->begin(), args->end());
    command.objectPath = object;
    auto report = runCompile(scope_, command, std::chrono::minutes(5));
    EXPECT_TRUE(report.ok()) << module.name << ": " << report.error().message();
    if (!report.ok())
      return std::nullopt;
    return corpus::testing::executableSections(object);
  }

  support::CleanupScope scope_;
  support::TempDir dir_;
};

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct FileStamp {
  ino_t inode = 0;
  int64_t mtimeNs = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {st.st_ino, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
}

TEST_F(OptimizedIrClang, ObjectsFromOptimisedIrEqualFullCompilesAndEntriesAreReused) {
  auto env = create(options("regalloc", "cache", false));
  ASSERT_TRUE(env);
  ASSERT_TRUE(env->describe().optimizedIr);
  std::map<std::string, FileStamp> stamps;
  size_t bytes = 0;
  for (const corpus::ModuleSpec& module : env->corpus().modules()) {
    auto prepared = env->prepareModule(module.name);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message();
    ASSERT_TRUE(prepared->optimizedIr) << module.name;
    EXPECT_TRUE(prepared->built) << module.name;
    auto full = compile(module, "full.o");
    auto fromIr = compile(*prepared->spec, "opt.o");
    ASSERT_TRUE(full && fromIr) << module.name;
    ASSERT_FALSE(full->empty()) << module.name;
    EXPECT_TRUE(*full == *fromIr) << module.name << ": executable sections differ";
    for (const auto& [name, text] : *full)
      bytes += text.size();
    stamps[module.name] = stamp(prepared->spec->bitcodePath);
  }
  EXPECT_GT(bytes, 0u);

  // Another environment (another process would do the same) finds them.
  env.reset();
  auto again = create(options("regalloc-priority", "cache", false));
  ASSERT_TRUE(again);
  for (const corpus::ModuleSpec& module : again->corpus().modules()) {
    auto prepared = again->prepareModule(module.name);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message();
    EXPECT_FALSE(prepared->built) << module.name;
    EXPECT_EQ(stamp(prepared->spec->bitcodePath), stamps[module.name]) << module.name;
  }
}

TEST_F(OptimizedIrClang, ADamagedEntryIsRebuiltNotTrusted) {
  auto env = create(options("regalloc", "cache", false));
  ASSERT_TRUE(env);
  const std::string module = "sha256.o";
  auto prepared = env->prepareModule(module);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  fs::path bitcode = prepared->spec->bitcodePath;
  std::string good = contents(bitcode);
  ASSERT_GT(good.size(), 64u);
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x5a; // Same size, one byte off.
  std::ofstream(bitcode, std::ios::binary | std::ios::trunc) << bad;
  env.reset();

  auto fresh = create(options("regalloc", "cache", false));
  ASSERT_TRUE(fresh);
  auto rebuilt = fresh->prepareModule(module);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  EXPECT_TRUE(rebuilt->built);
  EXPECT_EQ(contents(bitcode), good);
}

/// Plays `module` to the end: the eviction default, or the priority
/// problem's fallback (it has no default decision); the final summary.
std::optional<EpisodeSummary> play(Environment& env, const std::string& module, double* reward) {
  auto reset = env.reset({module, std::nullopt, {}});
  EXPECT_TRUE(reset.ok()) << module << ": " << reset.error().message();
  if (!reset.ok())
    return std::nullopt;
  StepResult step = reset->step;
  while (!step.terminated && !step.truncated) {
    ActionValue action = step.defaultAction ? *step.defaultAction : *step.fallbackAction;
    Status st = env.step(reset->episode, action, step);
    EXPECT_TRUE(st.ok()) << module << ": " << st.error().message();
    if (!st.ok())
      return std::nullopt;
  }
  *reward = step.reward;
  return step.summary;
}

void expectSameScoresOnBothPaths(Environment& fast, Environment& full) {
  size_t decided = 0;
  for (const corpus::ModuleSpec& module : fast.corpus().modules()) {
    double fastReward = 0, fullReward = 0;
    auto a = play(fast, module.name, &fastReward);
    auto b = play(full, module.name, &fullReward);
    ASSERT_TRUE(a && b) << module.name;
    EXPECT_EQ(a->policyScore, b->policyScore) << module.name;
    EXPECT_EQ(a->defaultScore, b->defaultScore) << module.name;
    EXPECT_EQ(fastReward, fullReward) << module.name;
    EXPECT_EQ(a->observations, b->observations) << module.name;
    ASSERT_EQ(a->contexts.size(), b->contexts.size()) << module.name;
    for (size_t i = 0; i < a->contexts.size(); ++i) {
      EXPECT_EQ(a->contexts[i].name, b->contexts[i].name) << module.name;
      EXPECT_EQ(a->contexts[i].policy, b->contexts[i].policy) << module.name;
      EXPECT_EQ(a->contexts[i].baseline, b->contexts[i].baseline) << module.name;
    }
    if (fast.describe().defaultActionSource.starts_with("clang-default"))
      EXPECT_EQ(fastReward, 0.0) << module.name; // clang's own default scores 0.
    decided += a->observations > 0;
  }
  EXPECT_GT(decided, 0u);
}

TEST_F(OptimizedIrClang, EvictionEpisodesScoreTheSameOnBothPaths) {
  auto fast = create(options("regalloc", "fast", false));
  auto full = create(options("regalloc", "full", true));
  ASSERT_TRUE(fast && full);
  EXPECT_FALSE(full->describe().optimizedIr);
  expectSameScoresOnBothPaths(*fast, *full);
}

TEST_F(OptimizedIrClang, PriorityEpisodesScoreTheSameOnBothPaths) {
  auto fast = create(options("regalloc-priority", "fast", false));
  auto full = create(options("regalloc-priority", "full", true));
  ASSERT_TRUE(fast && full);
  expectSameScoresOnBothPaths(*fast, *full);
}

TEST_F(OptimizedIrClang, ThePathsNeverShareABaseline) {
  auto fast = create(options("regalloc", "shared", false));
  auto full = create(options("regalloc", "shared", true));
  ASSERT_TRUE(fast && full);
  double reward = 0;
  auto first = play(*fast, "sha256.o", &reward);
  auto other = play(*full, "sha256.o", &reward);
  auto again = play(*full, "sha256.o", &reward);
  ASSERT_TRUE(first && other && again);
  EXPECT_FALSE(first->baselineCached);
  EXPECT_FALSE(other->baselineCached); // Its own key, computed on its own path.
  EXPECT_TRUE(again->baselineCached);
}

} // namespace
} // namespace mlgo::env
