//===- env/slot_timeout_clang_test.cc - no job slot: the episode ends -----===//
///
/// A step that finds every job slot busy for the whole compile timeout fails
/// with kTimeout "no job slot became free in time" and ends its episode:
/// the clang is killed, its directory (fifos and all) removed. The slot is
/// held by the test itself, so the timing is deterministic. Real clang-22.
///
//===----------------------------------------------------------------------===//
#include "episode.h"
#include "mlgo/env/clang_probe.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(SlotTimeout, StepWithoutASlotEndsTheEpisodeAndReleasesEverything) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto dir = support::TempDir::create(scope, "mlgo-env-slot-test-");
  ASSERT_TRUE(dir.ok());
  auto corpusDir = testing::buildTestCorpus(
      dir->path(), {{"m", "int f(int x) { return x * 7; }\n"
                          "int g(int y) { return f(y) + f(y + 1) + f(y * 3); }\n"}});
  auto corpus = corpus::Corpus::open(corpusDir);
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  auto problem = findProblem("inlining");
  ASSERT_TRUE(problem.ok());
  auto probe = probeProblem(scope, MLGO_CLANG, **problem, {});
  ASSERT_TRUE(probe.ok()) << probe.error().message();
  auto bound = (*problem)->bind(probe->header, {});
  ASSERT_TRUE(bound.ok()) << bound.error().message();

  std::filesystem::path temp = dir->path() / "tmp";
  std::filesystem::create_directories(temp);
  CompilePlanner planner(scope, **problem, MLGO_CLANG, {}, {}, temp);
  JobSlots slots(1);
  auto driver = processCompilerDriver();
  BaselineService baselines(*driver, planner, slots, std::nullopt, "test", 30s, 1);
  EpisodeContext context;
  context.driver = driver.get();
  context.problem = *problem;
  context.planner = &planner;
  context.slots = &slots;
  context.baselines = &baselines;
  context.bound = *bound;
  // Patient at start: the baseline compile holds the only slot meanwhile,
  // and a loaded machine makes it slow.
  context.limits.compileTimeout = 60s;
  context.limits.scope = &scope;

  size_t fds = testing::openDescriptors();
  Episode episode(1, corpus->modules().front(), {}, context);
  StepResult result;
  ASSERT_TRUE(episode.start(result).ok());
  ASSERT_FALSE(episode.over());
  ASSERT_TRUE(episode.pid().has_value());
  EXPECT_EQ(testing::entriesWithPrefix(temp, "mlgo-env-episode-"), 1u);

  auto held = slots.acquire(support::Clock::now() + 60s); // The only slot, busy.
  ASSERT_TRUE(held.ok());
  context.limits.compileTimeout = 500ms; // The step's wait for a slot.
  auto started = support::Clock::now();
  Status st = episode.step(*result.fallbackAction, result);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kTimeout);
  EXPECT_THAT(st.error().message(), HasSubstr("no job slot became free in time"));
  EXPECT_THAT(st.error().message(), HasSubstr("episode 1"));
  EXPECT_GE(support::Clock::now() - started, 450ms);
  // Over: clang killed and reaped, its directory gone, its descriptors closed.
  EXPECT_TRUE(episode.over());
  EXPECT_FALSE(episode.pid().has_value());
  EXPECT_EQ(testing::entriesWithPrefix(temp, "mlgo-env-episode-"), 0u);
  EXPECT_EQ(testing::childProcesses(), 0u);
  EXPECT_EQ(testing::openDescriptors(), fds);
  // A retry is refused without waiting again.
  EXPECT_EQ(episode.step(*result.fallbackAction, result).error().code(), ErrorCode::kNotFound);
  held->release();
}

} // namespace
} // namespace mlgo::env
