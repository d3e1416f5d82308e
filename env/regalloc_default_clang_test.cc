//===- env/regalloc_default_clang_test.cc - the emulated default, real clang -===//
///
/// With clang-22 on the -O2 demo corpus: answering info.default_action (the
/// host emulation of clang's default eviction advisor) reproduces the plain
/// compile on most functions and its total within 0.5%; truncated episodes
/// finish with the same policy.
///
/// Measured (bench/regalloc_default.py): 95.2% of 271 functions
/// identical, 89.9% of the 129 that make decisions; total ratio 0.99985.
/// The thresholds below are those figures rounded down, so a regression of
/// the emulation fails here.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "mlgo/env/clang_probe.h"
#include "mlgo/policy/default_eviction.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace mlgo::env {
namespace {

class RegallocDefaultTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
    EnvironmentOptions options;
    options.problem = "regalloc";
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = 2;
    auto env = Environment::create(options);
    ASSERT_TRUE(env.ok()) << env.error().message();
    env_ = std::move(*env);
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir scratch_;
  std::unique_ptr<Environment> env_;
};

struct Tally {
  size_t functions = 0, identical = 0;
  size_t withDecisions = 0, identicalWithDecisions = 0;
  double policyTotal = 0, defaultTotal = 0;
};

/// Plays `module` answering the default action; adds its functions to `tally`.
void playDefault(Environment& env, const std::string& module, Tally& tally) {
  auto reset = env.reset({module, std::nullopt, {}});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  std::set<std::string> decided;
  while (!step.terminated && !step.truncated) {
    ASSERT_TRUE(step.defaultAction) << module;
    decided.insert(step.observation.context);
    auto st = env.step(reset->episode, *step.defaultAction, step);
    ASSERT_TRUE(st.ok()) << module << ": " << st.error().message();
  }
  ASSERT_TRUE(step.summary);
  std::map<std::string, std::pair<double, double>> scores;
  for (const ContextScore& c : step.summary->contexts)
    scores[c.name] = {c.policy, c.baseline.value_or(0)};
  for (const std::string& f : decided)
    scores.try_emplace(f, 0.0, 0.0);
  for (const auto& [name, score] : scores) {
    bool same = score.first == score.second;
    ++tally.functions;
    tally.identical += same;
    if (decided.contains(name)) {
      ++tally.withDecisions;
      tally.identicalWithDecisions += same;
    }
  }
  tally.policyTotal += step.summary->policyScore;
  tally.defaultTotal += step.summary->defaultScore;
}

TEST_F(RegallocDefaultTest, DefaultActionReproducesMostFunctionsOfTheDemoCorpus) {
  EXPECT_EQ(env_->describe().defaultActionSource,
            std::string(policy::kDefaultEvictionPolicyName) + ":default-eviction");
  const auto& modules = env_->corpus().modules();
  Tally halves[2];
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        for (size_t i = t; i < modules.size(); i += 2)
          playDefault(*env_, modules[i].name, halves[t]);
      });
  }
  Tally all;
  for (const Tally& h : halves) {
    all.functions += h.functions;
    all.identical += h.identical;
    all.withDecisions += h.withDecisions;
    all.identicalWithDecisions += h.identicalWithDecisions;
    all.policyTotal += h.policyTotal;
    all.defaultTotal += h.defaultTotal;
  }
  ASSERT_GT(all.withDecisions, 100u);
  double identical = double(all.identical) / double(all.functions);
  double identicalWithDecisions = double(all.identicalWithDecisions) / double(all.withDecisions);
  double ratio = all.policyTotal / all.defaultTotal;
  RecordProperty("identical_functions", std::to_string(identical));
  RecordProperty("identical_functions_with_decisions", std::to_string(identicalWithDecisions));
  RecordProperty("total_ratio", std::to_string(ratio));
  EXPECT_GE(identical, 0.95) << all.identical << " of " << all.functions;
  EXPECT_GE(identicalWithDecisions, 0.89)
      << all.identicalWithDecisions << " of " << all.withDecisions;
  EXPECT_LE(std::abs(ratio - 1), 0.005) << ratio;
  EXPECT_EQ(env_->openEpisodes(), 0u);
}

// The fallback that finishes a truncated episode is the same emulation, so
// stopping after one step scores what answering every step does.
TEST_F(RegallocDefaultTest, TruncatedEpisodesFinishWithTheEmulation) {
  const std::string module = "sparse_matrix.o";
  ASSERT_TRUE(env_->corpus().find(module).ok());
  auto full = env_->reset({module, std::nullopt, {}});
  ASSERT_TRUE(full.ok()) << full.error().message();
  StepResult step = full->step;
  uint64_t steps = 0;
  while (!step.terminated && !step.truncated) {
    ASSERT_EQ(step.defaultAction, step.fallbackAction);
    ASSERT_TRUE(env_->step(full->episode, *step.defaultAction, step).ok());
    ++steps;
  }
  ASSERT_GT(steps, 2u);
  double fullReward = step.reward;

  EpisodeOptions options;
  options.maxSteps = 1;
  auto truncated = env_->reset({module, std::nullopt, options});
  ASSERT_TRUE(truncated.ok()) << truncated.error().message();
  StepResult cut = truncated->step;
  ASSERT_TRUE(env_->step(truncated->episode, *cut.defaultAction, cut).ok());
  EXPECT_TRUE(cut.truncated);
  ASSERT_TRUE(cut.summary);
  EXPECT_EQ(cut.summary->fallbackSteps + 1, steps);
  EXPECT_EQ(cut.reward, fullReward);
}

// clang-22 lists the eviction advisor's interactive options but not the one
// that would send its default decision: the probe says no.
TEST(RegallocIncludeDefaultProbeTest, Clang22DoesNotOfferIt) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto options = queryLlvmOptions(scope, MLGO_CLANG);
  ASSERT_TRUE(options.ok()) << options.error().message();
  EXPECT_THAT(*options, ::testing::Contains("regalloc-evict-interactive-channel-base"));
  EXPECT_FALSE(offersRegallocIncludeDefault(*options));
}

} // namespace
} // namespace mlgo::env
