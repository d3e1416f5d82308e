//===- env/optimized_ir_fake_test.cc - optimised IR on the fake driver -----===//
//
// Episodes of the register allocation problems compile each module's
// optimised IR, built on first use: once per module however many episodes
// ask at once, never remembered when it fails, rebuilt when the cached file
// is damaged, and not at all for inlining or with fullCompile; a Ctrl-C
// (reset's interrupt check) stops a first build, or the wait for one,
// promptly and caches nothing. The fake driver's "optimisation" writes a
// file naming the module (fake_driver.h). The same against real clang:
// optimized_ir_clang_test.cc; with a real (fake-compiler) process:
// optimized_ir_service_test.cc.
//
#include "mlgo/env/environment.h"
#include "mlgo/env/prepare_corpus.h"

#include "testing/fake_driver.h"
#include "testing/test_util.h"

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

std::unique_ptr<FakeEnvironment> make(FakeEnvironmentSetup setup) {
  auto created = FakeEnvironment::create(std::move(setup));
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(*created) : nullptr;
}

FakeEnvironmentSetup priority() {
  FakeEnvironmentSetup setup;
  setup.options.problem = "regalloc-priority";
  return setup;
}

/// Alpha plays the recorded stream with `change` applied.
FakeEnvironmentSetup priorityWithAlpha(const std::function<void(FakeModule&)>& change) {
  FakeEnvironmentSetup setup = priority();
  auto stream = testing::loadRecordedStream("regalloc-priority.stream");
  EXPECT_TRUE(stream.ok());
  FakeModule alpha;
  alpha.stream = stream.ok() ? *stream : "";
  change(alpha);
  setup.driver.modules["alpha"] = alpha;
  return setup;
}

/// Plays an episode of `module` with the fallback policy; its reward.
Result<double> play(Environment& env, const std::string& module) {
  ResetRequest request;
  request.module = module;
  auto reset = env.reset(request);
  if (!reset.ok())
    return reset.error();
  StepResult step = reset->step;
  while (!step.terminated && !step.truncated)
    MLGO_TRY(env.step(reset->episode, *step.fallbackAction, step));
  return step.reward;
}

TEST(OptimizedIrFake, FirstEpisodeBuildsAndLaterOnesReuse) {
  auto fake = make(priority());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  EXPECT_TRUE(env.describe().optimizedIr);
  for (int i = 0; i < 3; ++i) {
    auto reward = play(env, "alpha");
    ASSERT_TRUE(reward.ok()) << reward.error().message();
    EXPECT_EQ(*reward, 0.0);
  }
  EXPECT_EQ(fake->driver().optimizeCompiles(), 1u);
  EXPECT_EQ(fake->driver().plainCompiles(), 1u); // The default score, once.
  ASSERT_TRUE(play(env, "beta").ok());
  EXPECT_EQ(fake->driver().optimizeCompiles(), 2u);

  // What the episodes compiled: the twin in the cache, optimisations off.
  auto prepared = env.prepareModule("alpha");
  ASSERT_TRUE(prepared.ok());
  EXPECT_TRUE(prepared->optimizedIr);
  EXPECT_FALSE(prepared->built);
  EXPECT_EQ(prepared->spec->bitcodePath.parent_path(), env.describe().optimizedIrDir);
  EXPECT_EQ(prepared->spec->args.back(), "-disable-llvm-optzns");
  EXPECT_EQ(testing::readFile(prepared->spec->bitcodePath), "fake optimised IR of module alpha");
}

TEST(OptimizedIrFake, ConcurrentEpisodesShareOneBuild) {
  auto fake = make(
      priorityWithAlpha([](FakeModule& m) { m.optimizeTime = std::chrono::milliseconds(500); }));
  ASSERT_TRUE(fake);
  std::vector<std::thread> agents;
  for (int i = 0; i < 4; ++i)
    agents.emplace_back([&] {
      auto reward = play(fake->environment(), "alpha");
      EXPECT_TRUE(reward.ok()) << reward.error().message();
    });
  for (auto& agent : agents)
    agent.join();
  EXPECT_EQ(fake->driver().optimizeCompiles(), 1u);
}

TEST(OptimizedIrFake, AFailedBuildFailsItsWaitersAndIsNotRemembered) {
  auto fake = make(priorityWithAlpha([](FakeModule& m) {
    m.optimizeFault = FakeFault::kExitCode;
    m.optimizeTime = std::chrono::milliseconds(500);
  }));
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  std::vector<std::string> errors(3);
  std::vector<std::thread> agents;
  for (size_t i = 0; i < errors.size(); ++i)
    agents.emplace_back([&, i] {
      auto reward = play(env, "alpha");
      ASSERT_FALSE(reward.ok());
      EXPECT_EQ(reward.error().code(), ErrorCode::kCompiler);
      errors[i] = reward.error().message();
    });
  for (auto& agent : agents)
    agent.join();
  EXPECT_EQ(fake->driver().optimizeCompiles(), 1u); // Shared, not tried three times.
  for (const std::string& error : errors)
    EXPECT_THAT(error, HasSubstr("module alpha: optimising its IR"));
  EXPECT_EQ(fake->driver().sessionsStarted(), 0u);
  EXPECT_EQ(env.openEpisodes(), 0u);

  // Fixed: the next episode builds again.
  auto stream = testing::loadRecordedStream("regalloc-priority.stream");
  ASSERT_TRUE(stream.ok());
  FakeModule fixed;
  fixed.stream = *stream;
  fake->driver().setModule("alpha", fixed);
  auto reward = play(env, "alpha");
  ASSERT_TRUE(reward.ok()) << reward.error().message();
  EXPECT_EQ(fake->driver().optimizeCompiles(), 2u);
}

TEST(OptimizedIrFake, ADamagedEntryIsRebuilt) {
  auto fake = make(priority());
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  ASSERT_TRUE(play(env, "alpha").ok());
  auto prepared = env.prepareModule("alpha");
  ASSERT_TRUE(prepared.ok());
  std::filesystem::path bitcode = prepared->spec->bitcodePath;
  testing::writeFile(bitcode, "fake optimised IR of module beta"); // Not what was recorded.
  ASSERT_TRUE(play(env, "alpha").ok());
  EXPECT_EQ(fake->driver().optimizeCompiles(), 2u);
  EXPECT_EQ(testing::readFile(bitcode), "fake optimised IR of module alpha");
  std::filesystem::remove(bitcode);
  ASSERT_TRUE(play(env, "alpha").ok());
  EXPECT_EQ(fake->driver().optimizeCompiles(), 3u);
}

TEST(OptimizedIrFake, InliningAndFullCompilesDoNotOptimise) {
  FakeEnvironmentSetup full = priority();
  full.options.fullCompile = true;
  FakeEnvironmentSetup inlining;
  inlining.options.problem = "inlining";
  for (FakeEnvironmentSetup* setup : {&full, &inlining}) {
    auto fake = make(*setup);
    ASSERT_TRUE(fake);
    Environment& env = fake->environment();
    EXPECT_FALSE(env.describe().optimizedIr);
    ASSERT_TRUE(play(env, "alpha").ok());
    EXPECT_EQ(fake->driver().optimizeCompiles(), 0u);
    auto prepared = env.prepareModule("alpha");
    ASSERT_TRUE(prepared.ok());
    EXPECT_FALSE(prepared->optimizedIr);
    EXPECT_EQ(prepared->spec, &*env.corpus().find("alpha").value());
  }
}

TEST(OptimizedIrFake, FlagRulesTouchingTheAddedFlagAreRefused) {
  FakeEnvironmentSetup setup = priority();
  setup.options.flagRules.deleteFlags = {"-disable-llvm"};
  auto created = FakeEnvironment::create(setup);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(created.error().message(), HasSubstr("--full-compile"));
  setup.options.fullCompile = true;
  EXPECT_TRUE(FakeEnvironment::create(setup).ok());
}

TEST(OptimizedIrFake, PrepareCorpusBuildsEveryModuleOnceAndNamesFailures) {
  FakeEnvironmentSetup setup =
      priorityWithAlpha([](FakeModule& m) { m.optimizeFault = FakeFault::kDie; });
  setup.modules = {"alpha", "beta", "gamma"};
  auto fake = make(setup);
  ASSERT_TRUE(fake);
  std::vector<std::string> seen;
  auto report =
      prepareCorpus(fake->environment(), 2,
                    [&](const std::string& module, const std::string&) { seen.push_back(module); });
  EXPECT_EQ(report.modules, 3u);
  EXPECT_EQ(report.built, 2u);
  EXPECT_EQ(report.reused, 0u);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].first, "alpha");
  EXPECT_THAT(report.failures[0].second, HasSubstr("module alpha: optimising its IR"));
  EXPECT_EQ(seen.size(), 3u);
  report = prepareCorpus(fake->environment(), 2);
  EXPECT_EQ(report.reused, 2u);
  EXPECT_EQ(report.built, 0u);
  EXPECT_EQ(fake->driver().optimizeCompiles(), 4u); // alpha failed twice.
}

/// reset(`module`) with `ctrlC` fired once `hanging` compiles hang; its
/// error, and how long after the Ctrl-C it returned.
std::pair<Error, support::Clock::duration>
resetInterrupted(FakeEnvironment& fake, const std::string& module, size_t hanging) {
  testing::CtrlC ctrlC;
  std::thread firer([&] {
    EXPECT_TRUE(fake.driver().waitForHanging(hanging, std::chrono::seconds(10)));
    ctrlC.fire();
  });
  ResetRequest request;
  request.module = module;
  auto reset = fake.environment().reset(request, &ctrlC.check);
  auto returned = support::Clock::now();
  firer.join();
  EXPECT_FALSE(reset.ok());
  Error error = reset.ok() ? Error(ErrorCode::kInternal, "reset succeeded") : reset.error();
  return {error, returned - ctrlC.firedAt};
}

FakeModule playsPriority() {
  auto stream = testing::loadRecordedStream("regalloc-priority.stream");
  EXPECT_TRUE(stream.ok());
  FakeModule module;
  module.stream = stream.ok() ? *stream : "";
  return module;
}

TEST(OptimizedIrFake, CtrlCStopsAModulesFirstBuildPromptlyAndCachesNothing) {
  FakeEnvironmentSetup setup =
      priorityWithAlpha([](FakeModule& m) { m.optimizeFault = FakeFault::kHang; });
  setup.options.compileTimeout = std::chrono::seconds(60); // Never reached.
  auto fake = make(setup);
  ASSERT_TRUE(fake);
  Environment& env = fake->environment();
  auto [error, late] = resetInterrupted(*fake, "alpha", 1);
  EXPECT_EQ(error.code(), ErrorCode::kInterrupted);
  EXPECT_THAT(error.message(), HasSubstr("module alpha: optimising its IR"));
  EXPECT_THAT(error.message(), HasSubstr("interrupted"));
  EXPECT_LT(late, std::chrono::seconds(2)); // A slice is 50 ms; generous.
  EXPECT_EQ(fake->driver().optimizeCompiles(), 1u);
  EXPECT_EQ(fake->driver().sessionsStarted(), 0u);
  EXPECT_EQ(env.openEpisodes(), 0u);
  EXPECT_EQ(testing::childProcesses(), 0u);
  EXPECT_EQ(testing::entriesWithPrefix(fake->dir() / "tmp", "mlgo-env-optimize-"), 0u);
  EXPECT_TRUE(std::filesystem::is_empty(env.describe().optimizedIrDir)); // No entry.

  // Not remembered: the next reset builds again.
  fake->driver().setModule("alpha", playsPriority());
  ASSERT_TRUE(play(env, "alpha").ok());
  EXPECT_EQ(fake->driver().optimizeCompiles(), 2u);
}

TEST(OptimizedIrFake, CtrlCStopsAResetWaitingForAJobSlotOrAnotherEpisodesBuild) {
  FakeEnvironmentSetup setup =
      priorityWithAlpha([](FakeModule& m) { m.optimizeFault = FakeFault::kHang; });
  setup.options.jobs = 1;
  setup.options.compileTimeout = std::chrono::seconds(60);
  auto fake = make(setup);
  ASSERT_TRUE(fake);
  // An agent without Ctrl-C builds alpha, holding the only job slot.
  std::thread agent([&] { EXPECT_FALSE(play(fake->environment(), "alpha").ok()); });
  ASSERT_TRUE(fake->driver().waitForHanging(1, std::chrono::seconds(10)));
  for (std::string module : {"alpha", "beta"}) { // Alpha's build; a slot for beta's.
    auto [error, late] = resetInterrupted(*fake, module, 1);
    EXPECT_EQ(error.code(), ErrorCode::kInterrupted) << error.message();
    EXPECT_THAT(error.message(), HasSubstr("module " + module + ": optimising its IR"));
    EXPECT_LT(late, std::chrono::seconds(2));
  }
  EXPECT_EQ(fake->driver().optimizeCompiles(), 1u); // Beta never got a slot.
  fake->driver().releaseHangs();
  agent.join();
  EXPECT_EQ(fake->environment().openEpisodes(), 0u);
}

TEST(OptimizedIrFake, AnInterruptedBuildIsNotSharedWithItsWaiters) {
  FakeEnvironmentSetup setup =
      priorityWithAlpha([](FakeModule& m) { m.optimizeFault = FakeFault::kHang; });
  setup.options.compileTimeout = std::chrono::seconds(60);
  auto fake = make(setup);
  ASSERT_TRUE(fake);
  testing::CtrlC ctrlC;
  std::thread interrupted([&] {
    ResetRequest request;
    request.module = "alpha";
    auto reset = fake->environment().reset(request, &ctrlC.check);
    ASSERT_FALSE(reset.ok());
    EXPECT_EQ(reset.error().code(), ErrorCode::kInterrupted);
  });
  ASSERT_TRUE(fake->driver().waitForHanging(1, std::chrono::seconds(10)));
  fake->driver().setModule("alpha", playsPriority()); // Later compiles succeed.
  std::thread waiter([&] {
    auto reward = play(fake->environment(), "alpha"); // Waits for the build above.
    EXPECT_TRUE(reward.ok()) << reward.error().message();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // Let it wait.
  ctrlC.fire();
  interrupted.join();
  waiter.join();
  EXPECT_EQ(fake->driver().optimizeCompiles(), 2u); // The waiter built it itself.
}

} // namespace
} // namespace mlgo::env
