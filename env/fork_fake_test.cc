//===- env/fork_fake_test.cc - forks (reset with a prefix) on the fake driver ---===//
//
// EpisodeOptions::actions: the episode answers the prefix itself and hands
// over at decision k; it ends at reset when the compile ends first; a bad
// prefix action fails the reset naming its index and leaves nothing behind;
// maxSteps counts the agent's steps after the prefix. No clang needed.
//
#include "mlgo/env/environment.h"
#include "mlgo/env/score.h"

#include "testing/fake_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

using testing::FakeEnvironment;
using testing::FakeEnvironmentSetup;
using ::testing::HasSubstr;

constexpr uint64_t kInliningDecisions = 11; // In tests/data/streams/inlining.stream.

/// The score tells every answer apart: answer i (0/1) weighs 2^i.
FakeEnvironmentSetup weighingAnswers() {
  FakeEnvironmentSetup setup;
  setup.driver.fallback.scoreOfAnswers = [](const std::vector<std::vector<std::byte>>& answers) {
    double score = 1 << 20;
    for (size_t i = 0; i < answers.size(); ++i)
      if (!answers[i].empty() && answers[i][0] == std::byte{1})
        score -= static_cast<double>(1 << i);
    return score;
  };
  setup.driver.fallback.defaultScore = 1 << 20;
  return setup;
}

std::unique_ptr<FakeEnvironment> make(FakeEnvironmentSetup setup) {
  auto created = FakeEnvironment::create(std::move(setup));
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(*created) : nullptr;
}

ResetRequest fork(std::vector<ActionValue> prefix) {
  ResetRequest request;
  request.module = "alpha";
  request.options.actions = std::move(prefix);
  return request;
}

const std::vector<ActionValue> kAnswers = {int64_t{1}, int64_t{0}, int64_t{1}, int64_t{1},
                                           int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0},
                                           int64_t{1}, int64_t{1}, int64_t{0}};

/// Plays `answers` from `step` to the end.
void playOut(Environment& env, EpisodeId id, StepResult& step,
             std::span<const ActionValue> answers) {
  for (const ActionValue& answer : answers) {
    ASSERT_FALSE(step.terminated);
    Status st = env.step(id, answer, step);
    ASSERT_TRUE(st.ok()) << st.error().message();
  }
  ASSERT_TRUE(step.terminated);
}

TEST(Fork, HandsOverAtDecisionKAsSteppingByHandWould) {
  auto fake = make(weighingAnswers());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  ASSERT_EQ(kAnswers.size(), kInliningDecisions);
  for (size_t k : {size_t{1}, size_t{4}, kInliningDecisions - 1}) {
    // By hand: k steps, remember decision k, then the rest.
    auto byHand = env.reset(fork({}));
    ASSERT_TRUE(byHand.ok()) << byHand.error().message();
    StepResult hand = byHand->step;
    for (size_t i = 0; i < k; ++i)
      ASSERT_TRUE(env.step(byHand->episode, kAnswers[i], hand).ok());
    AgentObservation atK = hand.observation;
    playOut(env, byHand->episode, hand, std::span(kAnswers).subspan(k));

    auto forked = env.reset(fork({kAnswers.begin(), kAnswers.begin() + static_cast<long>(k)}));
    ASSERT_TRUE(forked.ok()) << forked.error().message();
    StepResult step = forked->step;
    ASSERT_FALSE(step.terminated);
    EXPECT_EQ(step.observation.id, atK.id) << "k=" << k;
    EXPECT_EQ(step.observation.bytes, atK.bytes) << "k=" << k;
    playOut(env, forked->episode, step, std::span(kAnswers).subspan(k));
    ASSERT_TRUE(step.summary);
    EXPECT_EQ(step.summary->policyScore, hand.summary->policyScore) << "k=" << k;
    EXPECT_DOUBLE_EQ(step.reward, hand.reward);
    EXPECT_EQ(step.summary->prefixSteps, k);
    EXPECT_EQ(step.summary->agentSteps, kInliningDecisions - k);
    EXPECT_EQ(step.summary->observations, kInliningDecisions);
  }
  EXPECT_EQ(env.openEpisodes(), 0u);
}

TEST(Fork, APrefixThatOutlastsTheCompileEndsAtResetWithTheReward) {
  auto fake = make(weighingAnswers());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  std::vector<ActionValue> longer = kAnswers;
  longer.insert(longer.end(), {int64_t{1}, int64_t{1}});
  for (const auto& prefix : {kAnswers, longer}) {
    auto forked = env.reset(fork(prefix));
    ASSERT_TRUE(forked.ok()) << forked.error().message();
    EXPECT_TRUE(forked->step.terminated);
    ASSERT_TRUE(forked->step.summary);
    EXPECT_EQ(forked->step.summary->prefixSteps, kInliningDecisions);
    EXPECT_EQ(forked->step.summary->agentSteps, 0u);
    // Answers 0, 2, 3, 5, 8, 9 inline.
    double expected = (1 << 20) - (1 + 4 + 8 + 32 + 256 + 512);
    EXPECT_EQ(forked->step.summary->policyScore, expected);
    EXPECT_DOUBLE_EQ(forked->step.reward, relativeReward(expected, 1 << 20));
  }
  EXPECT_EQ(env.openEpisodes(), 0u);
  EXPECT_EQ(fake->driver().liveSessions(), 0u);
}

TEST(Fork, ABadPrefixActionFailsTheResetNamingItsIndex) {
  auto fake = make(weighingAnswers());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  for (ActionValue bad : {ActionValue{int64_t{7}}, ActionValue{0.5}}) {
    auto forked = env.reset(fork({int64_t{1}, int64_t{0}, bad, int64_t{1}}));
    ASSERT_FALSE(forked.ok());
    EXPECT_EQ(forked.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(forked.error().message(), HasSubstr("actions[2]: "));
    EXPECT_THAT(forked.error().message(), HasSubstr("module alpha"));
    EXPECT_EQ(env.openEpisodes(), 0u);
    EXPECT_EQ(fake->driver().liveSessions(), 0u);
  }
  // The environment is fine afterwards.
  auto again = env.reset(fork({int64_t{1}}));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(env.close(again->episode).ok(), true);
}

TEST(Fork, MaxStepsCountsTheAgentsStepsAfterThePrefix) {
  auto fake = make(weighingAnswers());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  ResetRequest request = fork({int64_t{1}, int64_t{1}, int64_t{1}});
  request.options.maxSteps = 2;
  auto forked = env.reset(request);
  ASSERT_TRUE(forked.ok()) << forked.error().message();
  StepResult step = forked->step;
  ASSERT_TRUE(env.step(forked->episode, int64_t{1}, step).ok());
  EXPECT_FALSE(step.truncated);
  ASSERT_TRUE(env.step(forked->episode, int64_t{1}, step).ok());
  EXPECT_TRUE(step.truncated);
  ASSERT_TRUE(step.summary);
  EXPECT_EQ(step.summary->prefixSteps, 3u);
  EXPECT_EQ(step.summary->agentSteps, 2u);
  EXPECT_EQ(step.summary->fallbackSteps, kInliningDecisions - 5);
}

} // namespace
} // namespace mlgo::env
