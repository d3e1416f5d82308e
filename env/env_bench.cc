//===- env/env_bench.cc - episodes against plain compiles, side by side -----===//
///
/// \file
/// Measures what hosting costs. For every module of a corpus it runs, in one
/// process and alternating the order per module, (a) a default-policy
/// episode through the Environment API and (b) a plain compile of the same
/// module with the same flags, and prints:
///   - wall ratio: episode wall time / plain compile wall time;
///   - host CPU share: mlgo-env's own CPU time (getrusage RUSAGE_SELF, all
///     threads) during the episodes / clang's CPU time in them
///     (RUSAGE_CHILDREN);
///   - host CPU per observation, in microseconds.
/// Baselines are computed in a warm-up pass first, so the measured episodes
/// run no background compile.
///
/// Usage: env_bench --problem=P [--corpus=DIR] [--clang=PATH] [--repeat=N]
///                  [--modules=N] [--temp-dir=DIR]
/// The default policy is clang's own for inlining and the fallback policy
/// for the register allocation problems.
///
//===----------------------------------------------------------------------===//
#include "compile_plan.h"
#include "mlgo/env/environment.h"
#include "mlgo/env/run_compile.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace mlgo;
using namespace mlgo::env;

struct Usage {
  double self = 0;     ///< Seconds of CPU of this process.
  double children = 0; ///< Seconds of CPU of reaped children.
};

double toSeconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6;
}

Usage usageNow() {
  struct rusage self, children;
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  return {toSeconds(self.ru_utime) + toSeconds(self.ru_stime),
          toSeconds(children.ru_utime) + toSeconds(children.ru_stime)};
}

/// CPU time of the calling thread (cheaper to read than RUSAGE_SELF).
double threadCpu() {
  struct timespec ts;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Totals {
  double wall = 0, self = 0, children = 0;
  uint64_t observations = 0;
  /// mlgo-env CPU spent in reset() (spawn up to the first decision) and in
  /// the final step (waiting for exit, scoring, clean-up).
  double resetSelf = 0, finalSelf = 0;
};

/// One default-policy episode; returns false on error.
bool runEpisode(Environment& env, const std::string& module, Totals& totals) {
  Usage before = usageNow();
  auto start = support::Clock::now();
  auto reset = env.reset({module, std::nullopt, {}});
  if (!reset.ok()) {
    std::fprintf(stderr, "episode %s: %s\n", module.c_str(), reset.error().message().c_str());
    return false;
  }
  Usage mark = usageNow();
  totals.resetSelf += mark.self - before.self;
  StepResult step = std::move(reset->step);
  double lastStep = 0;
  while (!step.terminated && !step.truncated) {
    double stepStart = threadCpu();
    ActionValue action = step.defaultAction ? *step.defaultAction : *step.fallbackAction;
    auto st = env.step(reset->episode, action, step);
    if (!st.ok()) {
      std::fprintf(stderr, "episode %s: %s\n", module.c_str(), st.error().message().c_str());
      return false;
    }
    lastStep = threadCpu() - stepStart;
  }
  totals.finalSelf += lastStep;
  totals.wall += std::chrono::duration<double>(support::Clock::now() - start).count();
  Usage after = usageNow();
  totals.self += after.self - before.self;
  totals.children += after.children - before.children;
  totals.observations += step.summary->observations;
  return true;
}

/// One plain compile with the baseline's flags.
bool runPlain(const CompilePlanner& planner, const corpus::ModuleSpec& module, Totals& totals) {
  auto planned = planner.baseline(module);
  if (!planned.ok())
    return false;
  Usage before = usageNow();
  auto start = support::Clock::now();
  auto report = runCompile(planner.scope(), planned->command, std::chrono::minutes(10));
  totals.wall += std::chrono::duration<double>(support::Clock::now() - start).count();
  Usage after = usageNow();
  totals.self += after.self - before.self;
  totals.children += after.children - before.children;
  if (!report.ok())
    std::fprintf(stderr, "plain %s: %s\n", module.name.c_str(), report.error().message().c_str());
  return report.ok();
}

/// The kernel's share: host CPU of one blocking round trip over a pipe pair
/// (ppoll + read, then write, as a session does) with a child that spins
/// `childWork` between answers, like a compiler computing its next
/// decision. Any host of this synchronous protocol pays this per decision.
double roundTripFloorMicros(std::chrono::microseconds childWork, size_t observationBytes,
                            int rounds) {
  int toChild[2], toHost[2];
  if (::pipe(toChild) != 0 || ::pipe(toHost) != 0)
    return 0;
  std::vector<char> buffer(observationBytes + 64);
  pid_t pid = ::fork();
  if (pid == 0) { // Only async-signal-safe calls from here.
    char answer[8];
    for (int i = 0; i < rounds; ++i) {
      struct timespec start, now;
      ::clock_gettime(CLOCK_MONOTONIC, &start);
      do
        ::clock_gettime(CLOCK_MONOTONIC, &now);
      while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
             childWork.count() * 1000L);
      if (::write(toHost[1], buffer.data(), buffer.size()) < 0 ||
          ::read(toChild[0], answer, 8) <= 0)
        ::_exit(1);
    }
    ::_exit(0);
  }
  double before = usageNow().self;
  for (int i = 0; i < rounds; ++i) {
    struct pollfd pfd = {toHost[0], POLLIN, 0};
    ::ppoll(&pfd, 1, nullptr, nullptr);
    size_t got = 0;
    while (got < buffer.size()) {
      ssize_t n = ::read(toHost[0], buffer.data() + got, buffer.size() - got);
      if (n <= 0)
        break;
      got += static_cast<size_t>(n);
    }
    if (::write(toChild[1], buffer.data(), 8) < 0)
      break;
  }
  double after = usageNow().self;
  ::waitpid(pid, nullptr, 0);
  for (int fd : {toChild[0], toChild[1], toHost[0], toHost[1]})
    ::close(fd);
  return 1e6 * (after - before) / rounds;
}

std::string flag(int argc, char** argv, const char* name, std::string fallback) {
  std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0)
      return argv[i] + prefix.size();
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto cacheDir = support::TempDir::create(scope, "mlgo-env-bench-cache-");
  if (!cacheDir.ok())
    return 1;
  EnvironmentOptions options;
  options.problem = flag(argc, argv, "problem", "inlining");
  options.corpus = flag(argc, argv, "corpus", "");
  options.clang = flag(argc, argv, "clang", MLGO_CLANG);
  options.cacheDir = cacheDir->path();
  options.jobs = 1; // One compile at a time: clean per-compile timings.
  options.tempDir = flag(argc, argv, "temp-dir", "");
  int repeat = std::stoi(flag(argc, argv, "repeat", "1"));
  size_t maxModules = std::stoul(flag(argc, argv, "modules", "100000"));

  auto env = Environment::create(options);
  if (!env.ok()) {
    std::fprintf(stderr, "env_bench: %s\n", env.error().message().c_str());
    return 1;
  }
  const Problem& problem = (*env)->problem();
  CompilePlanner planner(scope, problem, options.clang, options.problemOptions, {},
                         options.tempDir);
  const auto& modules = (*env)->corpus().modules();
  size_t count = std::min(maxModules, modules.size());

  Totals warm;
  for (size_t i = 0; i < count; ++i) // Baselines into the cache, files into the page cache.
    if (!runEpisode(**env, modules[i].name, warm))
      return 1;

  size_t observationBytes = 0;
  for (const auto& spec : (*env)->describe().observationSpecs)
    observationBytes += spec.byteSize();
  Totals episodes, plain;
  double floorSelf = 0; // Kernel floor, summed over the episodes' observations.
  for (int r = 0; r < repeat; ++r) {
    for (size_t i = 0; i < count; ++i) {
      bool episodeFirst = (i + static_cast<size_t>(r)) % 2 == 0;
      Totals one;
      for (int k = 0; k < 2; ++k) {
        bool ok = (k == 0) == episodeFirst ? runEpisode(**env, modules[i].name, one)
                                           : runPlain(planner, modules[i], plain);
        if (!ok)
          return 1;
      }
      if (one.observations > 0) {
        // Right after the episode, under the same machine load: a bare
        // round trip paced like this module's decisions.
        auto work = std::chrono::microseconds(static_cast<int64_t>(
            std::min(2000.0, 1e6 * one.children / static_cast<double>(one.observations))));
        int rounds = static_cast<int>(std::min<uint64_t>(one.observations, 300));
        floorSelf += 1e-6 * roundTripFloorMicros(work, observationBytes, rounds) *
                     static_cast<double>(one.observations);
      }
      episodes.wall += one.wall;
      episodes.self += one.self;
      episodes.children += one.children;
      episodes.observations += one.observations;
      episodes.resetSelf += one.resetSelf;
      episodes.finalSelf += one.finalSelf;
    }
  }
  std::printf("problem %s, %zu modules x %d, clang %s\n", options.problem.c_str(), count, repeat,
              (*env)->describe().clangVersion.c_str());
  std::printf("  episodes: wall %.3f s, clang CPU %.3f s, mlgo-env CPU %.4f s, %llu observations\n",
              episodes.wall, episodes.children, episodes.self,
              static_cast<unsigned long long>(episodes.observations));
  std::printf("  plain:    wall %.3f s, clang CPU %.3f s\n", plain.wall, plain.children);
  std::printf("  wall ratio (episodes / plain):              %.4f\n", episodes.wall / plain.wall);
  std::printf("  clang CPU ratio (interactive / plain):      %.4f\n",
              episodes.children / plain.children);
  std::printf("  mlgo-env CPU / clang CPU in episodes:       %.3f %%  (target <= 1 %%)\n",
              100.0 * episodes.self / episodes.children);
  double n = static_cast<double>(count * static_cast<size_t>(repeat));
  std::printf("  mlgo-env CPU per episode:                   %.3f ms (of which reset %.3f, "
              "final step %.3f)\n",
              1e3 * episodes.self / n, 1e3 * episodes.resetSelf / n, 1e3 * episodes.finalSelf / n);
  std::printf("  mlgo-env CPU per plain compile:             %.3f ms\n", 1e3 * plain.self / n);
  double perObservation =
      episodes.observations ? 1e6 * episodes.self / static_cast<double>(episodes.observations) : 0;
  std::printf("  mlgo-env CPU per observation:               %.2f us (target <= 5 us)\n",
              perObservation);
  if (episodes.observations > 0) {
    double obs = static_cast<double>(episodes.observations);
    std::printf("  kernel floor: host CPU of a bare blocking pipe round trip, paced like each "
                "module's decisions, measured after each episode: %.2f us per observation\n",
                1e6 * floorSelf / obs);
    std::printf("  mlgo-env CPU above that floor: %.2f us per observation, %.3f %% of clang CPU\n",
                1e6 * (episodes.self - floorSelf) / obs,
                100.0 * (episodes.self - floorSelf) / episodes.children);
  }
  return 0;
}
