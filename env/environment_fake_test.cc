//===- env/environment_fake_test.cc - episodes on the fake driver ----------===//
//
// The episode lifecycle of an Environment whose compiles are recorded clang
// streams replayed in process: reset, step, close, truncation, invalid
// actions, limits. No clang needed.
//
#include "mlgo/env/environment.h"
#include "mlgo/env/score.h"

#include "testing/fake_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace mlgo::env {
namespace {

using testing::FakeEnvironment;
using testing::FakeEnvironmentSetup;
using testing::FakeFault;
using testing::FakeModule;
using ::testing::HasSubstr;

constexpr uint64_t kInliningDecisions = 11; // In tests/data/streams/inlining.stream.

ResetRequest named(std::string module) {
  ResetRequest request;
  request.module = std::move(module);
  return request;
}

ResetRequest seeded(uint64_t seed) {
  ResetRequest request;
  request.seed = seed;
  return request;
}

std::unique_ptr<FakeEnvironment> make(FakeEnvironmentSetup setup = {}) {
  auto created = FakeEnvironment::create(std::move(setup));
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(*created) : nullptr;
}

/// Plays an episode to its end with the fallback policy; returns the steps.
uint64_t playOut(Environment& env, EpisodeId id, StepResult& step) {
  uint64_t steps = 0;
  while (!step.terminated && !step.truncated) {
    EXPECT_TRUE(step.fallbackAction.has_value());
    Status st = env.step(id, *step.fallbackAction, step);
    EXPECT_TRUE(st.ok()) << st.error().message();
    if (!st.ok())
      break;
    ++steps;
  }
  return steps;
}

TEST(FakeEnvironment, DescribesTheRecordedHeaderWithoutClang) {
  auto fake = make();
  ASSERT_TRUE(fake);
  const EnvironmentDescription& d = fake->environment().describe();
  EXPECT_EQ(d.problem, "inlining");
  EXPECT_THAT(d.clangVersion, HasSubstr("fake clang"));
  EXPECT_EQ(d.corpusModules, 2u);
  ASSERT_TRUE(d.actionSpec.has_value());
  EXPECT_EQ(d.actionSpec->name(), "inlining_decision");
  EXPECT_GT(d.observationSpecs.size(), 30u);
}

TEST(FakeEnvironment, ResetStepsToTheEndWithTheReward) {
  FakeEnvironmentSetup setup;
  setup.driver.fallback.policyScore = 90;
  setup.driver.fallback.defaultScore = 100;
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto reset = env.reset(named("alpha"));
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  EXPECT_EQ(reset->module, "alpha");
  EXPECT_FALSE(reset->step.terminated);
  EXPECT_FALSE(reset->step.observation.bytes.empty());
  EXPECT_EQ(env.openEpisodes(), 1u);
  EXPECT_EQ(fake->driver().liveSessions(), 1u);
  StepResult step = reset->step;
  EXPECT_EQ(playOut(env, reset->episode, step), kInliningDecisions);
  EXPECT_TRUE(step.terminated);
  EXPECT_FALSE(step.truncated);
  ASSERT_TRUE(step.summary.has_value());
  EXPECT_EQ(step.summary->policyScore, 90);
  EXPECT_EQ(step.summary->defaultScore, 100);
  EXPECT_DOUBLE_EQ(step.reward, relativeReward(90, 100));
  EXPECT_EQ(step.summary->observations, kInliningDecisions);
  EXPECT_EQ(step.summary->agentSteps, kInliningDecisions);
  EXPECT_TRUE(step.summary->channelOpened);
  // The episode is gone, and with it its compile.
  EXPECT_EQ(env.openEpisodes(), 0u);
  EXPECT_EQ(fake->driver().liveSessions(), 0u);
  EXPECT_EQ(env.step(reset->episode, int64_t{0}, step).error().code(), ErrorCode::kNotFound);
}

TEST(FakeEnvironment, InvalidActionsNeverReachTheCompiler) {
  auto fake = make();
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto reset = env.reset(named("alpha"));
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  for (ActionValue bad : {ActionValue{int64_t{7}}, ActionValue{-1.5}}) {
    Status st = env.step(reset->episode, bad, step);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(fake->driver().answersReceived(), 0u);
  EXPECT_EQ(env.openEpisodes(), 1u); // The episode stays where it was.
  ASSERT_TRUE(env.step(reset->episode, int64_t{1}, step).ok());
  EXPECT_EQ(fake->driver().answersReceived(), 1u);
}

TEST(FakeEnvironment, MaxStepsTruncatesAndTheFallbackFinishes) {
  FakeEnvironmentSetup setup;
  setup.driver.fallback.policyScore = 120;
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  ResetRequest request = named("beta");
  request.options.maxSteps = 3;
  auto reset = env.reset(request);
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  EXPECT_EQ(playOut(env, reset->episode, step), 3u);
  EXPECT_TRUE(step.truncated);
  EXPECT_FALSE(step.terminated);
  ASSERT_TRUE(step.summary.has_value());
  EXPECT_EQ(step.summary->agentSteps, 3u);
  EXPECT_EQ(step.summary->fallbackSteps, kInliningDecisions - 3);
  EXPECT_DOUBLE_EQ(step.reward, relativeReward(120, 100));
  EXPECT_EQ(env.openEpisodes(), 0u);
}

TEST(FakeEnvironment, TheScoreFollowsTheAnswers) {
  FakeEnvironmentSetup setup;
  // Each "inline" answer (1) makes the object 10 bytes smaller.
  setup.driver.fallback.scoreOfAnswers = [](const std::vector<std::vector<std::byte>>& answers) {
    double score = 200;
    for (const auto& a : answers)
      if (!a.empty() && a[0] == std::byte{1})
        score -= 10;
    return score;
  };
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  for (int64_t answer : {0, 1}) {
    auto reset = env.reset(named("alpha"));
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    StepResult step = reset->step;
    while (!step.terminated)
      ASSERT_TRUE(env.step(reset->episode, answer, step).ok());
    EXPECT_EQ(step.summary->policyScore, answer == 0 ? 200 : 200 - 10.0 * kInliningDecisions);
  }
}

TEST(FakeEnvironment, CloseReleasesTheEpisodeOnce) {
  auto fake = make();
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto reset = env.reset({});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  EXPECT_TRUE(env.close(reset->episode).ok());
  EXPECT_EQ(env.openEpisodes(), 0u);
  EXPECT_EQ(fake->driver().liveSessions(), 0u);
  EXPECT_EQ(env.close(reset->episode).error().code(), ErrorCode::kNotFound);
  StepResult step;
  EXPECT_EQ(env.step(reset->episode, int64_t{0}, step).error().code(), ErrorCode::kNotFound);
}

TEST(FakeEnvironment, MaxEpisodesIsAPlaceEachAndClosingFreesOne) {
  FakeEnvironmentSetup setup;
  setup.options.maxEpisodes = 2;
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto first = env.reset({});
  auto second = env.reset({});
  ASSERT_TRUE(first.ok() && second.ok());
  auto third = env.reset({});
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code(), ErrorCode::kBusy);
  ASSERT_TRUE(env.close(first->episode).ok());
  EXPECT_TRUE(env.reset({}).ok());
}

TEST(FakeEnvironment, AModuleWithoutDecisionsIsSkippedWhenSampled) {
  FakeEnvironmentSetup setup;
  FakeModule silent;
  silent.fault = FakeFault::kNeverOpen;
  silent.policyScore = 50;
  silent.defaultScore = 40;
  silent.stream = *testing::loadRecordedStream("inlining.stream");
  setup.driver.modules["alpha"] = silent;
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  for (int i = 0; i < 6; ++i) {
    auto reset = env.reset(seeded(static_cast<uint64_t>(i)));
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    EXPECT_EQ(reset->module, "beta");
    ASSERT_TRUE(env.close(reset->episode).ok());
  }
  // Asked for by name, it ends at reset with its reward.
  auto byName = env.reset(named("alpha"));
  ASSERT_TRUE(byName.ok()) << byName.error().message();
  EXPECT_TRUE(byName->step.terminated);
  ASSERT_TRUE(byName->step.summary.has_value());
  EXPECT_FALSE(byName->step.summary->channelOpened);
  EXPECT_DOUBLE_EQ(byName->step.reward, relativeReward(50, 40));
  EXPECT_EQ(env.openEpisodes(), 0u);
}

TEST(FakeEnvironment, ManyContextsAndFloatActions) {
  FakeEnvironmentSetup setup;
  setup.options.problem = "regalloc-priority";
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto reset = env.reset(named("alpha"));
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  std::set<std::string> contexts;
  uint64_t steps = 0;
  while (!step.terminated) {
    contexts.insert(step.observation.context);
    ASSERT_TRUE(env.step(reset->episode, 0.5, step).ok());
    ++steps;
  }
  EXPECT_EQ(steps, 99u);
  EXPECT_EQ(contexts.size(), 3u);
}

TEST(FakeEnvironment, ParallelEpisodesOnTwoJobs) {
  FakeEnvironmentSetup setup;
  setup.options.jobs = 2;
  auto fake = make(std::move(setup));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  std::vector<std::thread> agents;
  std::atomic<int> finished{0};
  for (int a = 0; a < 6; ++a)
    agents.emplace_back([&] {
      for (int episode = 0; episode < 3; ++episode) {
        auto reset = env.reset({});
        if (!reset.ok())
          return;
        StepResult step = reset->step;
        if (playOut(env, reset->episode, step) == kInliningDecisions && step.terminated)
          ++finished;
      }
    });
  for (auto& t : agents)
    t.join();
  EXPECT_EQ(finished.load(), 18);
  EXPECT_EQ(env.openEpisodes(), 0u);
  EXPECT_EQ(fake->driver().liveSessions(), 0u);
  // One default compile per module, shared by every episode.
  EXPECT_EQ(fake->driver().plainCompiles(), 2u);
}

} // namespace
} // namespace mlgo::env
