//===- env/fork_clang_test.cc - forks (reset with a prefix) with clang-22 --===//
///
/// On the demo corpus with the real clang-22: a fork at decision k shows the
/// same observation k as stepping the prefix by hand, and ends with the same
/// scores and reward when the rest of the answers are the same; for inlining
/// and for regalloc.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "mlgo/env/score.h"

#include "testing/test_util.h"

#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

class ForkTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
    EnvironmentOptions options;
    options.problem = GetParam();
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = 2;
    auto env = Environment::create(options);
    ASSERT_TRUE(env.ok()) << env.error().message();
    env_ = std::move(*env);
  }

  /// The default answer, flipped (to another valid one) at every third
  /// decision, so the trajectory is not the default's.
  ActionValue answer(const StepResult& step, size_t index) const {
    ActionValue chosen = step.defaultAction ? *step.defaultAction : *step.fallbackAction;
    if (index % 3 == 1 && std::holds_alternative<int64_t>(chosen) && GetParam() == "inlining")
      chosen = int64_t{1 - std::get<int64_t>(chosen)};
    return chosen;
  }

  support::CleanupScope scope_;
  support::TempDir scratch_;
  std::unique_ptr<Environment> env_;
};

TEST_P(ForkTest, AForkAtKSeesWhatSteppingByHandSeesAndEndsTheSame) {
  // By hand, recording every answer and every observation.
  std::optional<ResetResult> first;
  for (uint64_t seed = 0; seed < 20 && !first; ++seed) {
    ResetRequest request;
    request.seed = seed;
    auto reset = env_->reset(request);
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    first = std::move(*reset);
  }
  ASSERT_TRUE(first);
  std::vector<ActionValue> answers;
  std::vector<AgentObservation> seen;
  StepResult step = first->step;
  while (!step.terminated) {
    seen.push_back(step.observation);
    answers.push_back(answer(step, answers.size()));
    Status st = env_->step(first->episode, answers.back(), step);
    ASSERT_TRUE(st.ok()) << st.error().message();
  }
  ASSERT_GE(answers.size(), 3u) << first->module << " asks too few decisions for this test";
  const EpisodeSummary byHand = *step.summary;

  for (size_t k : {size_t{1}, answers.size() / 2, answers.size() - 1}) {
    ResetRequest request;
    request.module = first->module;
    request.options.actions.assign(answers.begin(), answers.begin() + static_cast<long>(k));
    auto forked = env_->reset(request);
    ASSERT_TRUE(forked.ok()) << forked.error().message();
    StepResult rest = forked->step;
    ASSERT_FALSE(rest.terminated) << "k=" << k;
    EXPECT_EQ(rest.observation.context, seen[k].context) << "k=" << k;
    EXPECT_EQ(rest.observation.id, seen[k].id) << "k=" << k;
    EXPECT_EQ(rest.observation.bytes, seen[k].bytes) << "k=" << k;
    for (size_t i = k; !rest.terminated; ++i) {
      ASSERT_LT(i, answers.size()) << "the fork asks more decisions than the episode by hand";
      Status st = env_->step(forked->episode, answers[i], rest);
      ASSERT_TRUE(st.ok()) << st.error().message();
    }
    ASSERT_TRUE(rest.summary);
    EXPECT_EQ(rest.summary->policyScore, byHand.policyScore) << "k=" << k;
    EXPECT_EQ(rest.summary->defaultScore, byHand.defaultScore);
    EXPECT_DOUBLE_EQ(rest.reward, relativeReward(byHand.policyScore, byHand.defaultScore));
    EXPECT_EQ(rest.summary->prefixSteps, k);
    EXPECT_EQ(rest.summary->observations, byHand.observations);
  }

  // The whole trajectory as a prefix: the episode ends at reset, same reward.
  ResetRequest whole;
  whole.module = first->module;
  whole.options.actions = answers;
  auto ended = env_->reset(whole);
  ASSERT_TRUE(ended.ok()) << ended.error().message();
  EXPECT_TRUE(ended->step.terminated);
  ASSERT_TRUE(ended->step.summary);
  EXPECT_EQ(ended->step.summary->policyScore, byHand.policyScore);
  EXPECT_EQ(ended->step.summary->prefixSteps, answers.size());
  EXPECT_EQ(env_->openEpisodes(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Problems, ForkTest, ::testing::Values("inlining", "regalloc"));

} // namespace
} // namespace mlgo::env
