//===- env/optimized_ir_fake_test.cc - optimised IR on the fake driver -----===//
//
// Episodes of the register allocation problems compile each module's
// optimised IR, built on first use: once per module however many episodes
// ask at once, never remembered when it fails, rebuilt when the cached file
// is damaged, and not at all for inlining or with fullCompile. The fake
// driver's "optimisation" writes a file naming the module (fake_driver.h).
// The same against real clang: optimized_ir_clang_test.cc.
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

} // namespace
} // namespace mlgo::env
