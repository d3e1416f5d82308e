//===- env/fault_clang_test.cc - clang failing in every way it can ---------===//
///
/// Fault injection with the real clang-22: a compiler SIGKILLed or
/// SIGSTOPped mid-episode, a module whose compile never opens the fifos
/// (-O0), a corrupt .bc, a clang binary that disappears. Each ends only its
/// own episode, with a clear error; and after 200 episodes with faults mixed
/// in, the process holds no more descriptors, children or temporary
/// directories than before.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr std::string_view kPressure = R"(
static long mix(long a, long b) { return a * 31 + (b ^ (a >> 3)); }
long work(long *p, int n) {
  long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i2 = 9, j = 10, k = 11, l = 12,
       m = 13, o = 14, q = 15, r = 16;
  for (int i = 0; i < n; i++) {
    long v = p[i];
    a ^= v * b; b += c * v; c -= d ^ v; d *= e + v; e ^= f << 3; f += g * a; g -= h * b;
    h ^= i2 + c; i2 += j * d; j ^= k - e; k += l * f; l -= m ^ g; m *= o + h; o ^= q * i2;
    q += r * j; r -= a * k;
    if (v & 1) a = mix(a, v);
  }
  return a + b + c + d + e + f + g + h + i2 + j + k + l + m + o + q + r;
}
)";

/// One test corpus for the whole suite: two normal modules, one built at
/// -O0, one whose bitcode is then corrupted.
class FaultTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    suiteScope_ = new support::CleanupScope;
    auto dir = support::TempDir::create(*suiteScope_, "mlgo-env-faults-");
    ASSERT_TRUE(dir.ok());
    dir_ = new support::TempDir(std::move(*dir));
    corpus_ = testing::buildTestCorpus(
        dir_->path(), {{"ok", std::string(kPressure)},
                       {"ok2", std::string(kPressure) + "int extra(int x) { return x * 3; }\n"},
                       {"noopt", std::string(kPressure), {"-O0"}},
                       {"corrupt", std::string(kPressure)}});
    testing::writeFile(corpus_ / "corrupt.o.bc", "BC\xc0\xde this is not bitcode");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
    delete suiteScope_; // After everything registered in it.
    suiteScope_ = nullptr;
  }

  void SetUp() override {
    auto tmp = support::TempDir::create(scope_, "mlgo-env-faults-tmp-");
    ASSERT_TRUE(tmp.ok());
    tmp_ = std::move(*tmp);
  }

  std::unique_ptr<Environment> make(std::string problem, std::chrono::milliseconds timeout = 60s,
                                    fs::path clang = MLGO_CLANG) {
    EnvironmentOptions options;
    options.problem = std::move(problem);
    options.corpus = corpus_;
    options.clang = std::move(clang);
    options.cacheDir = tmp_.path() / "cache";
    options.tempDir = tmp_.path();
    options.compileTimeout = timeout;
    options.jobs = 2;
    auto env = Environment::create(options);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  /// Plays an episode to its end with the fallback policy.
  static Status finish(Environment& env, EpisodeId id, StepResult& step) {
    while (!step.terminated && !step.truncated)
      MLGO_TRY(env.step(id, *step.fallbackAction, step));
    return Status::success();
  }

  static inline support::CleanupScope* suiteScope_ = nullptr;
  static inline support::TempDir* dir_ = nullptr;
  static inline fs::path corpus_;
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir tmp_;
};

TEST_F(FaultTest, KilledClangEndsOnlyItsEpisode) {
  auto env = make("regalloc");
  ASSERT_TRUE(env);
  auto victim = env->reset({"ok.o", std::nullopt, {}});
  auto other = env->reset({"ok2.o", std::nullopt, {}});
  ASSERT_TRUE(victim.ok()) << victim.error().message();
  ASSERT_TRUE(other.ok()) << other.error().message();
  ASSERT_FALSE(victim->step.terminated);
  auto pid = env->compilerPid(victim->episode);
  ASSERT_TRUE(pid);
  ASSERT_EQ(::kill(*pid, SIGKILL), 0);
  StepResult step = victim->step;
  Status st = finish(*env, victim->episode, step);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(st.error().message(), HasSubstr("signal 9"));
  EXPECT_THAT(st.error().message(), HasSubstr("module ok.o"));
  EXPECT_EQ(env->step(victim->episode, ActionValue(int64_t{0}), step).error().code(),
            ErrorCode::kNotFound);
  StepResult otherStep = other->step;
  ASSERT_TRUE(finish(*env, other->episode, otherStep).ok());
  EXPECT_TRUE(otherStep.terminated);
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(FaultTest, StoppedClangTimesOut) {
  auto env = make("regalloc", 5s);
  ASSERT_TRUE(env);
  auto victim = env->reset({"ok.o", std::nullopt, {}});
  ASSERT_TRUE(victim.ok()) << victim.error().message();
  ASSERT_FALSE(victim->step.terminated);
  ASSERT_EQ(::kill(*env->compilerPid(victim->episode), SIGSTOP), 0);
  StepResult step = victim->step;
  auto started = support::Clock::now();
  Status st = finish(*env, victim->episode, step);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kTimeout);
  EXPECT_THAT(st.error().message(), HasSubstr("compile timeout"));
  EXPECT_LT(support::Clock::now() - started, 20s);
  EXPECT_EQ(testing::childProcesses(), 0u); // Killed and reaped, not left stopped.
  // The environment still works.
  auto next = env->reset({"ok2.o", std::nullopt, {}});
  ASSERT_TRUE(next.ok()) << next.error().message();
  ASSERT_TRUE(finish(*env, next->episode, next->step).ok());
}

TEST_F(FaultTest, ModuleThatNeverOpensTheFifosEndsAtReset) {
  for (const char* problem : {"inlining", "regalloc"}) {
    auto env = make(problem);
    ASSERT_TRUE(env);
    auto reset = env->reset({"noopt.o", std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    EXPECT_TRUE(reset->step.terminated);
    ASSERT_TRUE(reset->step.summary);
    EXPECT_EQ(reset->step.summary->observations, 0u);
    EXPECT_EQ(reset->step.reward, 0.0);
    EXPECT_EQ(env->openEpisodes(), 0u);
    // Sampling skips it: every sampled episode has a decision to make (the
    // corrupt module is sampled too, and fails as it should).
    int started = 0;
    for (int i = 0; i < 12; ++i) {
      auto sampled = env->reset({});
      if (!sampled.ok()) {
        EXPECT_THAT(sampled.error().message(), HasSubstr("corrupt.o"));
        continue;
      }
      ++started;
      EXPECT_FALSE(sampled->step.terminated);
      EXPECT_NE(sampled->module, "noopt.o");
      ASSERT_TRUE(env->close(sampled->episode).ok());
    }
    EXPECT_GT(started, 0);
  }
}

TEST_F(FaultTest, CorruptBitcodeIsAClearError) {
  auto env = make("inlining");
  ASSERT_TRUE(env);
  auto reset = env->reset({"corrupt.o", std::nullopt, {}});
  ASSERT_FALSE(reset.ok());
  EXPECT_EQ(reset.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(reset.error().message(), HasSubstr("corrupt.o"));
  EXPECT_THAT(reset.error().message(), HasSubstr("exited with code 1"));
  EXPECT_THAT(reset.error().message(), HasSubstr("error:"));
  EXPECT_EQ(env->openEpisodes(), 0u);
}

TEST_F(FaultTest, MissingClangIsAClearError) {
  EnvironmentOptions options;
  options.clang = "/nonexistent/bin/clang-22";
  options.corpus = corpus_;
  auto env = Environment::create(options);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(env.error().message(), HasSubstr("/nonexistent/bin/clang-22"));

  // A clang that disappears after start-up fails new episodes only.
  fs::path link = tmp_.path() / "clang-22";
  fs::create_symlink(MLGO_CLANG, link);
  auto live = make("inlining", 60s, link);
  ASSERT_TRUE(live);
  auto running = live->reset({"ok.o", std::nullopt, {}});
  ASSERT_TRUE(running.ok()) << running.error().message();
  fs::remove(link);
  auto failed = live->reset({"ok2.o", std::nullopt, {}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(failed.error().message(), HasSubstr("clang-22"));
  ASSERT_TRUE(finish(*live, running->episode, running->step).ok());
}

TEST_F(FaultTest, FailedBaselineIsRetriedByTheNextEpisode) {
  // A clang whose first default (plain -cc1) compile is SIGKILLed, as the
  // OOM killer would; everything else runs the real clang.
  fs::path marker = tmp_.path() / "killed-once";
  fs::path wrapper = tmp_.path() / "clang-22";
  testing::writeFile(wrapper, "#!/bin/sh\n"
                              "case \"$*\" in *interactive-channel-base*) ;; *-cc1*)\n"
                              "  if [ ! -e '" + marker.string() + "' ]; then : > '" +
                                  marker.string() + "'; kill -9 $$; fi ;;\n"
                              "esac\n"
                              "exec '" MLGO_CLANG "' \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  auto env = make("inlining", 60s, wrapper);
  ASSERT_TRUE(env);
  auto first = env->reset({"ok.o", std::nullopt, {}});
  ASSERT_TRUE(first.ok()) << first.error().message();
  Status st = finish(*env, first->episode, first->step);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message(), HasSubstr("default compile of module ok.o"));
  EXPECT_THAT(st.error().message(), HasSubstr("signal 9"));
  ASSERT_TRUE(fs::exists(marker));
  // The failure was not remembered: the next episode compiles the baseline
  // again, and it succeeds.
  auto second = env->reset({"ok.o", std::nullopt, {}});
  ASSERT_TRUE(second.ok()) << second.error().message();
  StepResult step = second->step;
  ASSERT_TRUE(finish(*env, second->episode, step).ok());
  ASSERT_TRUE(step.summary);
  EXPECT_FALSE(step.summary->baselineCached);
  EXPECT_GT(step.summary->defaultScore, 0.0);
}

TEST_F(FaultTest, UnsafeCommandsStopStartUp) {
  // A copy of the corpus whose ok.o writes a stats file wherever it likes.
  fs::path copy = tmp_.path() / "corpus";
  fs::copy(corpus_, copy, fs::copy_options::recursive);
  fs::path stats = tmp_.path() / "stats.json";
  std::string cmd = testing::readFile(copy / "ok.o.cmd");
  testing::writeFile(copy / "ok.o.cmd", cmd + std::string(1, '\0') + "-stats-file=" +
                                            stats.string());
  EnvironmentOptions options;
  options.problem = "inlining";
  options.corpus = copy;
  options.useDiskCache = false;
  options.tempDir = tmp_.path();
  auto env = Environment::create(options);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(env.error().message(), HasSubstr("module ok.o"));
  EXPECT_THAT(env.error().message(), HasSubstr("-stats-file"));
  EXPECT_FALSE(fs::exists(stats));
  // Deleting the flag is the way out.
  options.flagRules.deleteFlags = {"-stats-file"};
  auto fixed = Environment::create(options);
  ASSERT_TRUE(fixed.ok()) << fixed.error().message();
  fixed->reset();
  // An empty .bc is refused too, by name.
  testing::writeFile(copy / "ok2.o.bc", "");
  auto empty = Environment::create(options);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message(), HasSubstr("module ok2.o"));
  EXPECT_THAT(empty.error().message(), HasSubstr("empty"));
}

/// 200 episodes, faults mixed in; nothing leaks.
TEST_F(FaultTest, TwoHundredEpisodesLeakNothing) {
  size_t fds;
  size_t tempDirs;
  {
    auto env = make("regalloc", 4s);
    ASSERT_TRUE(env);
    // Warm up (baselines cached, lazily opened files) before counting.
    for (const char* m : {"ok.o", "ok2.o", "noopt.o"}) {
      auto r = env->reset({m, std::nullopt, {}});
      ASSERT_TRUE(r.ok()) << r.error().message();
      ASSERT_TRUE(finish(*env, r->episode, r->step).ok());
    }
    fds = testing::openDescriptors();
    tempDirs = testing::entriesWithPrefix(tmp_.path(), "mlgo-env-");
    EXPECT_EQ(tempDirs, 0u);
    EXPECT_EQ(testing::childProcesses(), 0u);

    int completed = 0, failed = 0;
    for (int i = 0; i < 200; ++i) {
      const char* module = i % 13 == 5   ? "corrupt.o"
                           : i % 11 == 3 ? "noopt.o"
                           : i % 2       ? "ok.o"
                                         : "ok2.o";
      auto reset = env->reset({module, std::nullopt, {}});
      if (!reset.ok()) {
        ++failed;
        continue;
      }
      StepResult step = reset->step;
      EpisodeId id = reset->episode;
      if (!step.terminated) {
        if (i % 17 == 0)
          ::kill(*env->compilerPid(id), SIGKILL);
        else if (i == 50 || i == 150)
          ::kill(*env->compilerPid(id), SIGSTOP);
        else if (i % 7 == 0) {
          ASSERT_TRUE(env->close(id).ok());
          continue;
        } else if (i % 5 == 0) {
          StepResult ignored;
          EXPECT_FALSE(env->step(id, ActionValue(int64_t{-1}), ignored).ok());
        }
      }
      Status st = finish(*env, id, step);
      st.ok() ? ++completed : ++failed;
    }
    EXPECT_GT(completed, 100);
    EXPECT_GT(failed, 20);
    EXPECT_EQ(env->openEpisodes(), 0u);
    EXPECT_EQ(testing::openDescriptors(), fds);
    EXPECT_EQ(testing::childProcesses(), 0u);
    EXPECT_EQ(testing::entriesWithPrefix(tmp_.path(), "mlgo-env-"), tempDirs);
  }
  // And once the environment is gone, its worker threads' resources too.
  EXPECT_LE(testing::openDescriptors(), fds);
  EXPECT_EQ(testing::childProcesses(), 0u);
}

} // namespace
} // namespace mlgo::env
