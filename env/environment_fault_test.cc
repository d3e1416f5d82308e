//===- env/environment_fault_test.cc - compilers misbehaving, in process ---===//
//
// Every way the fake driver's compiler can fail ends the episode with an
// error naming it and releases everything: its compile, its place, its slot.
// No clang needed.
//
#include "mlgo/env/environment.h"

#include "episode.h"
#include "testing/fake_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using testing::FakeEnvironment;
using testing::FakeEnvironmentSetup;
using testing::FakeFault;
using testing::FakeModule;
using ::testing::HasSubstr;

ResetRequest named(std::string module) {
  ResetRequest request;
  request.module = std::move(module);
  return request;
}

struct Faulty {
  std::unique_ptr<FakeEnvironment> fake;
  EpisodeId episode = 0;
  StepResult step;
};

/// An environment whose module "alpha" misbehaves as told, with an episode
/// on it started (when the fault lets reset succeed).
Faulty start(FakeFault fault, uint64_t after, FakeEnvironmentSetup setup = {}) {
  Faulty out;
  FakeModule module;
  module.stream = *testing::loadRecordedStream("inlining.stream");
  module.fault = fault;
  module.faultAfter = after;
  setup.driver.modules["alpha"] = module;
  auto created = FakeEnvironment::create(std::move(setup));
  EXPECT_TRUE(created.ok()) << created.error().message();
  if (!created.ok())
    return out;
  out.fake = std::move(*created);
  auto reset = out.fake->environment().reset(named("alpha"));
  EXPECT_TRUE(reset.ok()) << reset.error().message();
  if (reset.ok()) {
    out.episode = reset->episode;
    out.step = reset->step;
  }
  return out;
}

/// Steps with the fallback until an error (returned) or the end (success).
Status stepUntilFailure(Faulty& f, uint64_t* steps = nullptr) {
  Environment& env = f.fake->environment();
  while (!f.step.terminated && !f.step.truncated) {
    Status st = env.step(f.episode, *f.step.fallbackAction, f.step);
    if (!st.ok())
      return st;
    if (steps)
      ++*steps;
  }
  return Status::success();
}

void expectReleased(Faulty& f) {
  EXPECT_EQ(f.fake->environment().openEpisodes(), 0u);
  EXPECT_EQ(f.fake->driver().liveSessions(), 0u);
  StepResult step;
  EXPECT_EQ(f.fake->environment().step(f.episode, int64_t{0}, step).error().code(),
            ErrorCode::kNotFound);
}

TEST(FakeFaults, StreamTruncatedMidObservation) {
  Faulty f = start(FakeFault::kTruncate, 4);
  ASSERT_TRUE(f.fake);
  uint64_t steps = 0;
  Status st = stepUntilFailure(f, &steps);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(steps, 3u); // The 4th answer is followed by half an observation.
  EXPECT_EQ(st.error().code(), ErrorCode::kParse);
  EXPECT_THAT(st.error().message(), HasSubstr("malformed stream"));
  EXPECT_THAT(st.error().message(), HasSubstr("module alpha"));
  expectReleased(f);
}

TEST(FakeFaults, MalformedStream) {
  Faulty f = start(FakeFault::kMalformed, 2);
  ASSERT_TRUE(f.fake);
  Status st = stepUntilFailure(f);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message(), HasSubstr("malformed stream"));
  expectReleased(f);
}

TEST(FakeFaults, CompilerDiesMidEpisode) {
  Faulty f = start(FakeFault::kDie, 5);
  ASSERT_TRUE(f.fake);
  Status st = stepUntilFailure(f);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(st.error().message(), HasSubstr("signal 11"));
  EXPECT_THAT(st.error().message(), HasSubstr("after 5 observations"));
  expectReleased(f);
}

TEST(FakeFaults, CompilerExitsWithAnError) {
  Faulty f = start(FakeFault::kExitCode, 0);
  ASSERT_TRUE(f.fake);
  Status st = stepUntilFailure(f);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(st.error().message(), HasSubstr("exited with code 1"));
  expectReleased(f);
}

TEST(FakeFaults, TooManyObservationsHitTheCap) {
  FakeEnvironmentSetup setup;
  setup.options.maxObservations = 4;
  Faulty f = start(FakeFault::kNone, 0, std::move(setup));
  ASSERT_TRUE(f.fake);
  Status st = stepUntilFailure(f);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message(), HasSubstr("observation cap"));
  expectReleased(f);
}

TEST(FakeFaults, HungCompilerTimesOut) {
  FakeEnvironmentSetup setup;
  setup.options.compileTimeout = 150ms;
  Faulty f = start(FakeFault::kHang, 2, std::move(setup));
  ASSERT_TRUE(f.fake);
  auto begin = std::chrono::steady_clock::now();
  Status st = stepUntilFailure(f);
  auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kTimeout);
  EXPECT_GE(took, 140ms);
  EXPECT_LT(took, 5s);
  expectReleased(f);
}

TEST(FakeFaults, ShutdownWakesAHungResetAndRefusesNewOnes) {
  FakeEnvironmentSetup setup;
  FakeModule hung;
  hung.stream = *testing::loadRecordedStream("inlining.stream");
  hung.fault = FakeFault::kHang;
  setup.driver.modules["alpha"] = hung;
  auto created = FakeEnvironment::create(std::move(setup));
  ASSERT_TRUE(created.ok()) << created.error().message();
  Environment& env = (*created)->environment();
  auto reset = std::async(std::launch::async, [&] { return env.reset(named("alpha")); });
  ASSERT_TRUE((*created)->driver().waitForHanging(1, 5s));
  auto begin = std::chrono::steady_clock::now();
  env.shutdown();
  ASSERT_EQ(reset.wait_for(2s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
  auto result = reset.get();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message(), HasSubstr("killed"));
  EXPECT_EQ(env.reset(named("beta")).error().code(), ErrorCode::kIo);
  EXPECT_EQ(env.openEpisodes(), 0u);
}

TEST(FakeFaults, NoFreeJobSlotEndsTheStepAndReleasesTheEpisode) {
  // Episode level, with the only slot held by the test: deterministic.
  auto created = FakeEnvironment::create({});
  ASSERT_TRUE(created.ok()) << created.error().message();
  FakeEnvironment& fake = **created;
  support::CleanupScope& scope = fake.environment().cleanupScope();
  auto problem = findProblem("inlining");
  ASSERT_TRUE(problem.ok());
  auto probe = fake.driver().probe(scope, "clang", **problem, {}, 1s, {});
  ASSERT_TRUE(probe.ok()) << probe.error().message();
  auto bound = (*problem)->bind(probe->header, {});
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  const corpus::ModuleSpec& module = fake.environment().corpus().modules().front();
  std::filesystem::path temp = fake.dir() / "tmp";
  CompilePlanner planner(scope, **problem, "clang", {}, {}, temp);
  JobSlots slots(1);
  BaselineService baselines(fake.driver(), planner, slots, std::nullopt, "test", 30s, 1);
  EpisodeContext context{*problem, &planner, &slots, &baselines, &fake.driver(), *bound, {}, nullptr};
  context.limits.compileTimeout = 200ms;
  context.limits.scope = &scope;

  Episode episode(1, module, {}, context);
  StepResult result;
  ASSERT_TRUE(episode.start(result).ok());
  EXPECT_EQ(fake.driver().liveSessions(), 1u);
  auto held = slots.acquire(support::Clock::now() + 60s);
  ASSERT_TRUE(held.ok());
  Status st = episode.step(*result.fallbackAction, result);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kTimeout);
  EXPECT_THAT(st.error().message(), HasSubstr("no job slot became free in time"));
  EXPECT_TRUE(episode.over());
  EXPECT_EQ(fake.driver().liveSessions(), 0u);
  EXPECT_EQ(fake.driver().answersReceived(), 0u); // Nothing reached the compiler.
}

TEST(FakeFaults, AFailedBaselineIsNotRemembered) {
  FakeEnvironmentSetup setup;
  FakeModule broken;
  broken.stream = *testing::loadRecordedStream("inlining.stream");
  broken.baselineFault = FakeFault::kDie;
  setup.driver.modules["alpha"] = broken;
  auto created = FakeEnvironment::create(std::move(setup));
  ASSERT_TRUE(created.ok()) << created.error().message();
  FakeEnvironment& fake = **created;
  Environment& env = fake.environment();
  auto play = [&]() -> Status {
    auto reset = env.reset(named("alpha"));
    if (!reset.ok())
      return reset.error();
    StepResult step = reset->step;
    while (!step.terminated)
      MLGO_TRY(env.step(reset->episode, *step.fallbackAction, step));
    return Status::success();
  };
  Status first = play();
  ASSERT_FALSE(first.ok());
  EXPECT_THAT(first.error().message(), HasSubstr("default compile"));
  EXPECT_EQ(env.openEpisodes(), 0u);
  // The module is fixed (the OOM killer has gone): the next episode compiles anew.
  broken.baselineFault = FakeFault::kNone;
  fake.driver().setModule("alpha", broken);
  Status second = play();
  EXPECT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(fake.driver().plainCompiles(), 2u);
}

} // namespace
} // namespace mlgo::env
