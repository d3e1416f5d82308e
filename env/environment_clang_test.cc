//===- env/environment_clang_test.cc - episodes with the real clang-22 -----===//
///
/// Runs whole episodes over the demo corpus with clang-22: default policies
/// reproduce plain compiles, other policies score differently, every
/// register allocation episode completes, invalid actions never reach clang.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "mlgo/env/run_compile.h"
#include "mlgo/env/score.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>

namespace mlgo::env {
namespace {

using ::testing::HasSubstr;

class EnvironmentTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
  }

  std::unique_ptr<Environment> make(std::string problem, unsigned jobs = 2) {
    EnvironmentOptions options;
    options.problem = std::move(problem);
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = jobs;
    auto env = Environment::create(options);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  /// Plays a whole episode on `module`, answering with `policy`.
  template <typename Policy>
  EpisodeSummary play(Environment& env, const std::string& module, Policy policy,
                      double* reward = nullptr) {
    auto reset = env.reset({module, std::nullopt, {}});
    EXPECT_TRUE(reset.ok()) << reset.error().message();
    if (!reset.ok())
      return {};
    StepResult step = reset->step;
    while (!step.terminated && !step.truncated) {
      auto st = env.step(reset->episode, policy(step), step);
      EXPECT_TRUE(st.ok()) << st.error().message();
      if (!st.ok())
        return {};
    }
    if (reward != nullptr)
      *reward = step.reward;
    return *step.summary;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir scratch_;
};

/// Compiles `module` answering "inline" to every call site, without the
/// Environment, and measures the object with llvm-readelf.
double independentAlwaysInlineBytes(const corpus::ModuleSpec& module) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto dir = support::TempDir::create(scope, "mlgo-env-test-");
  EXPECT_TRUE(dir.ok());
  std::filesystem::path keep = dir->path().string() + ".o";
  CompileCommand command;
  command.objectPath = dir->path() / "out.o";
  command.channelBase = dir->path() / "ch";
  command.argv = {MLGO_CLANG};
  auto args = corpus::recompileArgs(module, command.objectPath);
  EXPECT_TRUE(args.ok());
  command.argv.insert(command.argv.end(), args->begin(), args->end());
  for (auto& arg : (*findProblem("inlining"))->interactiveArgs(command.channelBase.string(), {}))
    command.argv.push_back(arg);
  SessionLimits limits;
  limits.scope = &scope;
  auto session = startCompilerSession(std::move(*dir), command, limits);
  EXPECT_TRUE(session.ok());
  Observation obs;
  int64_t one = 1;
  std::span<const std::byte> advice(reinterpret_cast<const std::byte*>(&one), 8);
  while (*(*session)->next(obs) == SessionEvent::kObservation)
    EXPECT_TRUE((*session)->answer(advice).ok());
  EXPECT_TRUE((*session)->finish().ok());
  std::filesystem::copy_file(command.objectPath, keep);
  session->reset();
  CompileCommand readelf;
  readelf.argv = {"llvm-readelf-22", "-S", "-W", keep.string()};
  auto listing = runCompile(scope, readelf, std::chrono::seconds(60));
  std::filesystem::remove(keep);
  EXPECT_TRUE(listing.ok());
  return static_cast<double>(testing::parseReadelfExecutable(listing->output).bytes);
}

ActionValue defaultPolicy(const StepResult& step) {
  return *step.defaultAction;
}
ActionValue fallbackPolicy(const StepResult& step) {
  return *step.fallbackAction;
}

TEST_F(EnvironmentTest, DescribesTheProblemFromClangsHeader) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  const EnvironmentDescription& d = env->describe();
  EXPECT_EQ(d.problem, "inlining");
  EXPECT_THAT(d.clangVersion, HasSubstr("clang version 22"));
  ASSERT_TRUE(d.actionSpec);
  EXPECT_EQ(d.actionSpec->name(), "inlining_decision");
  EXPECT_FALSE(d.observationSpecs.empty());
  for (const auto& spec : d.observationSpecs)
    EXPECT_NE(spec.name(), "inlining_default"); // Reported in info, not a feature.
  EXPECT_GT(d.corpusModules, 10u);
  EXPECT_EQ(d.observationOffsets.size(), d.observationSpecs.size());
}

TEST_F(EnvironmentTest, InliningDefaultPolicyReproducesEveryDemoModule) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  uint64_t decisions = 0;
  for (const auto& module : env->corpus().modules()) {
    double reward = -99;
    EpisodeSummary s = play(*env, module.name, defaultPolicy, &reward);
    EXPECT_EQ(s.policyScore, s.defaultScore) << module.name;
    EXPECT_GT(s.defaultScore, 0) << module.name;
    EXPECT_EQ(reward, 0.0) << module.name;
    EXPECT_EQ(s.fallbackSteps, 0u);
    decisions += s.observations;
  }
  EXPECT_GT(decisions, 100u);
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(EnvironmentTest, AlwaysAndNeverInlineScoreDifferentlyAndCorrectly) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  int differing = 0;
  for (const std::string module : {"sha256.o", "json_parser.o", "huffman.o", "rb_tree.o"}) {
    if (!env->corpus().find(module).ok())
      continue;
    double always = 0, never = 0;
    auto a = play(
        *env, module, [](const StepResult&) { return ActionValue(int64_t{1}); }, &always);
    auto n = play(
        *env, module, [](const StepResult&) { return ActionValue(int64_t{0}); }, &never);
    EXPECT_EQ(a.defaultScore, n.defaultScore);
    EXPECT_DOUBLE_EQ(always, 1 - a.policyScore / a.defaultScore);
    EXPECT_DOUBLE_EQ(never, 1 - n.policyScore / n.defaultScore);
    differing += a.policyScore != n.policyScore;
    if (module == "sha256.o")
      EXPECT_EQ(a.policyScore, independentAlwaysInlineBytes(*env->corpus().find(module).value()));
  }
  EXPECT_GE(differing, 2);
}

TEST_F(EnvironmentTest, RegallocEpisodesCompleteOnEveryDemoModule) {
  for (const char* problem : {"regalloc", "regalloc-priority"}) {
    auto env = make(problem);
    ASSERT_TRUE(env);
    uint64_t decisions = 0;
    for (const auto& module : env->corpus().modules()) {
      double reward = std::numeric_limits<double>::quiet_NaN();
      EpisodeSummary s = play(*env, module.name, fallbackPolicy, &reward);
      EXPECT_TRUE(std::isfinite(s.policyScore)) << problem << " " << module.name;
      EXPECT_TRUE(std::isfinite(s.defaultScore)) << problem << " " << module.name;
      EXPECT_TRUE(std::isfinite(reward)) << problem << " " << module.name;
      decisions += s.observations;
    }
    EXPECT_GT(decisions, 100u) << problem;
  }
}

TEST_F(EnvironmentTest, InvalidInliningActionsAreRejectedAndTheEpisodeContinues) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  auto reset = env->reset({"json_parser.o", std::nullopt, {}});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  ASSERT_FALSE(reset->step.terminated);
  StepResult step = reset->step;
  for (ActionValue bad : {ActionValue(int64_t{2}), ActionValue(int64_t{-1}), ActionValue(0.5),
                          ActionValue(std::nan(""))}) {
    StepResult ignored;
    auto st = env->step(reset->episode, bad, ignored);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(st.error().message(), HasSubstr("0 (do not inline) or 1 (inline)"));
  }
  while (!step.terminated)
    ASSERT_TRUE(env->step(reset->episode, *step.defaultAction, step).ok());
  EXPECT_EQ(step.reward, 0.0); // The rejected actions changed nothing.
}

/// Eviction: masked, out-of-range and negative indices would crash clang or
/// make it loop; each is refused and a valid answer then works.
TEST_F(EnvironmentTest, InvalidEvictionsNeverReachClang) {
  auto env = make("regalloc");
  ASSERT_TRUE(env);
  const auto& specs = env->describe().observationSpecs;
  size_t mask = 0;
  while (mask < specs.size() && specs[mask].name() != "mask")
    ++mask;
  ASSERT_LT(mask, specs.size());
  size_t candidates = specs[mask].elementCount();
  int rejectedMasked = 0;
  for (const auto& module : env->corpus().modules()) {
    auto reset = env->reset({module.name, std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    StepResult step = reset->step;
    while (!step.terminated) {
      const std::byte* m = step.observation.bytes.data() + env->describe().observationOffsets[mask];
      for (size_t i = 0; i < candidates; ++i) {
        int64_t bit;
        std::memcpy(&bit, m + 8 * i, 8);
        if (bit != 0)
          continue;
        StepResult ignored;
        auto st = env->step(reset->episode, ActionValue(static_cast<int64_t>(i)), ignored);
        ASSERT_FALSE(st.ok());
        EXPECT_THAT(st.error().message(), HasSubstr("is 0"));
        ++rejectedMasked;
        break;
      }
      for (int64_t bad : {int64_t{-1}, static_cast<int64_t>(candidates), int64_t{99}}) {
        StepResult ignored;
        auto st = env->step(reset->episode, ActionValue(bad), ignored);
        ASSERT_FALSE(st.ok());
        EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
      }
      ASSERT_TRUE(env->step(reset->episode, *step.fallbackAction, step).ok());
    }
    if (rejectedMasked >= 20)
      break;
  }
  EXPECT_GT(rejectedMasked, 0);
}

TEST_F(EnvironmentTest, InvalidPrioritiesAreRejected) {
  auto env = make("regalloc-priority");
  ASSERT_TRUE(env);
  auto reset = env->reset({env->corpus().modules().front().name, std::nullopt, {}});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  ASSERT_FALSE(reset->step.terminated);
  // 4294967295 rounds to 2^32 as a float: it would overflow clang's cast.
  for (ActionValue bad : {ActionValue(-1.0), ActionValue(std::nan("")), ActionValue(INFINITY),
                          ActionValue(4294967296.0), ActionValue(int64_t{4294967295})}) {
    StepResult ignored;
    auto st = env->step(reset->episode, bad, ignored);
    ASSERT_FALSE(st.ok()) << formatAction(bad);
    EXPECT_THAT(st.error().message(), HasSubstr("[0, 4294967296)"));
  }
  StepResult step = reset->step;
  ASSERT_TRUE(env->step(reset->episode, ActionValue(4294967040.0), step).ok());
  while (!step.terminated)
    ASSERT_TRUE(env->step(reset->episode, ActionValue(int64_t{7}), step).ok());
  EXPECT_TRUE(std::isfinite(step.reward));
}

TEST_F(EnvironmentTest, MaxStepsTruncatesWithTheFallbackPolicy) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  EpisodeOptions options;
  options.maxSteps = 2;
  auto reset = env->reset({"json_parser.o", std::nullopt, options});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  int steps = 0;
  while (!step.terminated && !step.truncated) {
    ASSERT_TRUE(env->step(reset->episode, *step.defaultAction, step).ok());
    ++steps;
  }
  EXPECT_EQ(steps, 2);
  EXPECT_TRUE(step.truncated);
  ASSERT_TRUE(step.summary);
  EXPECT_EQ(step.summary->agentSteps, 2u);
  EXPECT_GT(step.summary->fallbackSteps, 0u);
  // The fallback is clang's default, so the compile is the plain one.
  EXPECT_EQ(step.reward, 0.0);
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(EnvironmentTest, BaselinesAreCachedOnDisk) {
  {
    auto env = make("regalloc");
    ASSERT_TRUE(env);
    auto s = play(*env, "sha256.o", fallbackPolicy);
    EXPECT_FALSE(s.baselineCached);
  }
  // One baseline entry, and the optimised-IR cache's directory beside it
  // (regalloc episodes compile cached optimised IR).
  EXPECT_EQ(testing::entriesWithPrefix(scratch_.path() / "cache", ""), 2u);
  EXPECT_EQ(testing::entriesWithPrefix(scratch_.path() / "cache" / "optimized-ir", ""), 2u);
  auto env = make("regalloc");
  ASSERT_TRUE(env);
  auto s = play(*env, "sha256.o", fallbackPolicy);
  EXPECT_TRUE(s.baselineCached);
  EXPECT_GT(s.defaultScore, 0);
  ASSERT_FALSE(s.contexts.empty());
  double sum = 0;
  for (const auto& c : s.contexts) {
    EXPECT_TRUE(c.baseline.has_value()) << c.name;
    sum += c.policy;
  }
  EXPECT_NEAR(sum, s.policyScore, 1e-6 * s.policyScore);
}

/// Threads running episodes at once, and one agent holding more open
/// episodes than there are job slots (a compiler waiting for its agent
/// holds no slot, so this cannot deadlock).
TEST_F(EnvironmentTest, ConcurrentEpisodesFromManyThreads) {
  auto env = make("inlining", /*jobs=*/1);
  ASSERT_TRUE(env);
  const auto& modules = env->corpus().modules();
  std::atomic<int> zeroRewards{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        const std::string& module = modules[(t * 4 + i) % modules.size()].name;
        auto reset = env->reset({module, std::nullopt, {}});
        if (!reset.ok()) {
          ++failures;
          continue;
        }
        StepResult step = reset->step;
        while (!step.terminated)
          if (!env->step(reset->episode, *step.defaultAction, step).ok()) {
            ++failures;
            break;
          }
        zeroRewards += step.terminated && step.reward == 0.0;
      }
    });
  // Meanwhile: six episodes open at once, stepped round robin.
  std::vector<std::pair<EpisodeId, StepResult>> open;
  for (size_t i = 0; i < 6; ++i) {
    auto reset = env->reset({modules[i].name, std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    if (!reset->step.terminated)
      open.emplace_back(reset->episode, reset->step);
  }
  while (!open.empty()) {
    for (auto it = open.begin(); it != open.end();) {
      ASSERT_TRUE(env->step(it->first, *it->second.defaultAction, it->second).ok());
      if (it->second.terminated) {
        EXPECT_EQ(it->second.reward, 0.0);
        it = open.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(zeroRewards.load(), 16);
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(EnvironmentTest, SampledResetsAreSeeded) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  auto first = env->reset({"", 42, {}});
  ASSERT_TRUE(first.ok()) << first.error().message();
  ASSERT_TRUE(env->close(first->episode).ok());
  auto again = env->reset({"", 42, {}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->module, again->module);
  ASSERT_TRUE(env->close(again->episode).ok());
  EXPECT_EQ(env->close(again->episode).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(EnvironmentTest, UnknownModuleAndProblemAreClearErrors) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  auto reset = env->reset({"no_such_module.o", std::nullopt, {}});
  ASSERT_FALSE(reset.ok());
  EXPECT_EQ(reset.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(reset.error().message(), HasSubstr("no_such_module.o"));

  EnvironmentOptions options;
  options.problem = "vectorize";
  options.clang = MLGO_CLANG;
  auto bad = Environment::create(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), HasSubstr("regalloc-priority"));
}

} // namespace
} // namespace mlgo::env
