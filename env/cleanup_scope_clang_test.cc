//===- env/cleanup_scope_clang_test.cc - environments clean up apart ------===//
///
/// Two Environments in one process, each with a cleanup scope of its own
/// (support/cleanup_scope.h): cleaning up one, as the command line's signal
/// handling does, kills its clang and removes its episode's directory, while
/// the other's episode plays on to its reward. In-process: no death test,
/// no fork. Real clang-22.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"

#include "testing/test_util.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

/// Dead (a zombie its owner has not reaped yet), not merely signalled.
bool isDead(pid_t pid) {
  siginfo_t info = {};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
         info.si_pid == pid;
}

class CleanupScopeEnvTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-scope-env-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message();
    dir_ = std::move(*dir);
    corpus_ = testing::buildTestCorpus(
        dir_.path(), {{"m", "int f(int x) { return x * 7; }\n"
                            "int g(int y) { return f(y) + f(y + 1) + f(y * 3); }\n"}});
  }

  /// An environment whose compiles go under <dir>/<name>, in `cleanup`.
  std::unique_ptr<Environment> make(const std::string& name,
                                    std::shared_ptr<support::CleanupScope> cleanup) {
    EnvironmentOptions options;
    options.problem = "inlining";
    options.corpus = corpus_;
    options.clang = MLGO_CLANG;
    options.tempDir = dir_.path() / name;
    options.cacheDir = dir_.path() / name / "cache";
    options.jobs = 2;
    options.cleanup = std::move(cleanup);
    fs::create_directories(options.tempDir);
    auto env = Environment::create(options);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  static Status finish(Environment& env, EpisodeId id, StepResult& step) {
    while (!step.terminated && !step.truncated)
      MLGO_TRY(env.step(id, *step.fallbackAction, step));
    return Status::success();
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
  fs::path corpus_;
};

TEST_F(CleanupScopeEnvTest, TwoEnvironmentsCleanUpIndependently) {
  auto interruptedScope = std::make_shared<support::CleanupScope>();
  auto runningScope = std::make_shared<support::CleanupScope>();
  auto interrupted = make("a", interruptedScope);
  auto running = make("b", runningScope);
  ASSERT_TRUE(interrupted && running);
  EXPECT_EQ(&interrupted->cleanupScope(), interruptedScope.get());
  auto victim = interrupted->reset({"m.o", std::nullopt, {}});
  auto other = running->reset({"m.o", std::nullopt, {}});
  ASSERT_TRUE(victim.ok()) << victim.error().message();
  ASSERT_TRUE(other.ok()) << other.error().message();
  ASSERT_FALSE(victim->step.terminated || other->step.terminated);
  pid_t victimPid = *interrupted->compilerPid(victim->episode);
  pid_t otherPid = *running->compilerPid(other->episode);
  EXPECT_EQ(testing::entriesWithPrefix(dir_.path() / "a", "mlgo-env-episode-"), 1u);

  EXPECT_GE(interruptedScope->cleanup(), 1u);
  EXPECT_TRUE(isDead(victimPid));
  EXPECT_EQ(testing::entriesWithPrefix(dir_.path() / "a", "mlgo-env-"), 0u);
  EXPECT_FALSE(isDead(otherPid)) << "the other environment's clang was killed";
  EXPECT_EQ(testing::entriesWithPrefix(dir_.path() / "b", "mlgo-env-episode-"), 1u);
  EXPECT_FALSE(runningScope->cleanupBegan());

  // The cleaned-up environment fails its episode and refuses new ones...
  StepResult step = victim->step;
  EXPECT_FALSE(finish(*interrupted, victim->episode, step).ok());
  auto refused = interrupted->reset({"m.o", std::nullopt, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kIo);
  // ...while the other plays on to its reward.
  StepResult otherStep = other->step;
  Status played = finish(*running, other->episode, otherStep);
  ASSERT_TRUE(played.ok()) << played.error().message();
  EXPECT_TRUE(otherStep.terminated);
  ASSERT_TRUE(otherStep.summary.has_value());
  EXPECT_GT(otherStep.summary->defaultScore, 0.0);
}

} // namespace
} // namespace mlgo::env
