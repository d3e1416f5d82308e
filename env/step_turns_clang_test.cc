//===- env/step_turns_clang_test.cc - step() in non-blocking turns ---------===//
///
/// Environment::beginStep/pollStep/finishStep with the real clang-22: an
/// episode played in turns sees the same requests and reward as one played
/// with step(); a step in flight refuses another; closing an episode in
/// flight releases it; maxSteps and a busy job slot fall back to step().
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>

#include <thread>

namespace mlgo::env {
namespace {

using ::testing::HasSubstr;

class StepTurnsTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
  }

  /// With 2 jobs a step always finds a slot: the episode's own compile
  /// releases its slot when it asks for a decision, and the module's
  /// default compile holds at most one.
  void make(unsigned jobs) {
    EnvironmentOptions options;
    options.problem = "inlining";
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = jobs;
    auto env = Environment::create(options);
    ASSERT_TRUE(env.ok()) << env.error().message();
    env_ = std::move(*env);
  }

  /// One step in turns; counts how it went.
  Status stepInTurns(EpisodeId id, const ActionValue& action, StepResult& result) {
    int fd = -1;
    auto progress = env_->beginStep(id, action, fd);
    if (!progress.ok())
      return progress.error();
    if (*progress == StepProgress::kMustBlock) {
      ++blockingSteps_;
      return env_->step(id, action, result);
    }
    while (*progress == StepProgress::kWaiting) {
      pollfd p{fd, POLLIN, 0};
      EXPECT_EQ(::poll(&p, 1, 30'000), 1) << "the compiler's stream never became readable";
      progress = env_->pollStep(id, result);
      if (!progress.ok())
        return progress.error();
    }
    if (*progress == StepProgress::kMustBlock) {
      ++finishedSteps_;
      return env_->finishStep(id, result);
    }
    ++polledSteps_;
    return Status::success();
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir scratch_;
  std::unique_ptr<Environment> env_;
  int blockingSteps_ = 0, finishedSteps_ = 0, polledSteps_ = 0;
};

ActionValue answer(const StepResult& step, int round) {
  // Default mostly, deviating now and then so the reward is not trivially 0.
  int64_t fallback = std::get<int64_t>(step.defaultAction.value_or(ActionValue(int64_t{0})));
  return ActionValue(round % 5 == 0 ? 1 - fallback : fallback);
}

TEST_F(StepTurnsTest, TurnsPlayAnEpisodeExactlyAsStepDoes) {
  ASSERT_NO_FATAL_FAILURE(make(2));
  auto viaStep = env_->reset({"sha256.o", std::nullopt, {}});
  ASSERT_TRUE(viaStep.ok()) << viaStep.error().message();
  auto viaTurns = env_->reset({"sha256.o", std::nullopt, {}});
  ASSERT_TRUE(viaTurns.ok()) << viaTurns.error().message();
  StepResult a = viaStep->step, b = viaTurns->step;
  int round = 0;
  while (!a.terminated) {
    ASSERT_FALSE(b.terminated) << "turns ended early at step " << round;
    ASSERT_EQ(a.observation.bytes, b.observation.bytes) << "step " << round;
    ASSERT_EQ(a.observation.context, b.observation.context);
    ActionValue action = answer(a, round++);
    ASSERT_TRUE(env_->step(viaStep->episode, action, a).ok());
    auto st = stepInTurns(viaTurns->episode, action, b);
    ASSERT_TRUE(st.ok()) << st.error().message();
  }
  ASSERT_TRUE(b.terminated);
  EXPECT_EQ(a.reward, b.reward);
  ASSERT_TRUE(a.summary && b.summary);
  EXPECT_EQ(a.summary->policyScore, b.summary->policyScore);
  EXPECT_EQ(b.summary->agentSteps, static_cast<uint64_t>(round));
  EXPECT_GT(polledSteps_, 0);
  EXPECT_EQ(finishedSteps_, 1) << "only the last step waits for the compile to end";
  EXPECT_EQ(env_->openEpisodes(), 0u);
}

TEST_F(StepTurnsTest, AStepInFlightRefusesAnotherAndCloseReleasesIt) {
  ASSERT_NO_FATAL_FAILURE(make(1));
  auto reset = env_->reset({"sha256.o", std::nullopt, {}});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  auto other = env_->reset({"sha256.o", std::nullopt, {}});
  ASSERT_TRUE(other.ok()) << other.error().message();
  StepResult step = reset->step;
  int fd = -1;
  // The module's first default compile may hold the only slot for a while;
  // kMustBlock means nothing happened, so the step is simply begun again.
  auto progress = env_->beginStep(reset->episode, answer(step, 1), fd);
  for (auto until = support::Clock::now() + std::chrono::seconds(60);
       progress.ok() && *progress == StepProgress::kMustBlock && support::Clock::now() < until;
       progress = env_->beginStep(reset->episode, answer(step, 1), fd))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(progress.ok()) << progress.error().message();
  ASSERT_EQ(*progress, StepProgress::kWaiting);
  EXPECT_GE(fd, 0);
  auto again = env_->step(reset->episode, answer(step, 1), step);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), ErrorCode::kBusy);
  EXPECT_THAT(again.error().message(), HasSubstr("still answering"));
  // The job slot (jobs=1) is held by the step in flight until it ends.
  StepResult otherStep = other->step;
  int otherFd = -1;
  auto blocked = env_->beginStep(other->episode, answer(otherStep, 1), otherFd);
  ASSERT_TRUE(blocked.ok());
  EXPECT_EQ(*blocked, StepProgress::kMustBlock) << "no job slot was free";
  ASSERT_TRUE(env_->close(reset->episode).ok());
  auto poll = env_->pollStep(reset->episode, step);
  ASSERT_FALSE(poll.ok());
  EXPECT_EQ(poll.error().code(), ErrorCode::kNotFound);
  // Closing gave the slot back: the other episode's step starts (once the
  // module's first default compile, which may hold the slot too, is done).
  auto until = support::Clock::now() + std::chrono::seconds(60);
  do {
    blocked = env_->beginStep(other->episode, answer(otherStep, 1), otherFd);
    ASSERT_TRUE(blocked.ok()) << blocked.error().message();
    if (*blocked == StepProgress::kMustBlock)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (*blocked == StepProgress::kMustBlock && support::Clock::now() < until);
  ASSERT_EQ(*blocked, StepProgress::kWaiting) << "the closed episode's slot was never released";
  ASSERT_TRUE(env_->finishStep(other->episode, otherStep).ok());
  EXPECT_FALSE(otherStep.terminated);
  ASSERT_TRUE(env_->close(other->episode).ok());
  EXPECT_EQ(env_->openEpisodes(), 0u);
}

TEST_F(StepTurnsTest, TheStepReachingMaxStepsIsLeftToStep) {
  ASSERT_NO_FATAL_FAILURE(make(2));
  auto reset = env_->reset({"sha256.o", std::nullopt, {.maxSteps = 2}});
  ASSERT_TRUE(reset.ok()) << reset.error().message();
  StepResult step = reset->step;
  ASSERT_TRUE(stepInTurns(reset->episode, answer(step, 1), step).ok());
  EXPECT_EQ(blockingSteps_, 0);
  ASSERT_TRUE(stepInTurns(reset->episode, answer(step, 1), step).ok());
  EXPECT_EQ(blockingSteps_, 1);
  EXPECT_TRUE(step.truncated);
}

} // namespace
} // namespace mlgo::env
