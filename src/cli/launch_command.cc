//===- src/cli/launch_command.cc - mlgo-env launch --------------------------===//
///
/// `mlgo-env launch --policy=FILE [--problem=P] -- COMPILER ARGS...`, a
/// compiler launcher (mlgo/launch/launcher.h): compiles run with the policy
/// (or the table, mlgo/launch/tuned_launch.h) answering, a call of several
/// sources or a compile-and-link is taken apart (mlgo/launch/split_launch.h),
/// every other call is exec()ed unchanged. The exit code is the
/// compiler's; 1 when the compile failed otherwise (the message names the
/// source file); 2 for a bad launcher command line; 127 when the compiler
/// cannot be run at all. The same launcher is also the program
/// mlgo-env-launch (src/launch_main.cc), which starts faster.
///
//===----------------------------------------------------------------------===//
#include "cli/launch_command.h"
#include "cli/commands.h"
#include "cli/interrupt.h"

#include "mlgo/launch/compile_args.h"
#include "mlgo/launch/launcher.h"
#include "mlgo/launch/split_call.h"
#include "mlgo/launch/split_launch.h"
#include "mlgo/launch/thinlto_jobs.h"
#include "mlgo/launch/tuned_launch.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <optional>

namespace mlgo::cli {
namespace {

struct LaunchFlags {
  launch::LaunchOptions options;
  std::string policy;
  std::string tuning;
  std::string log;
  bool noLog = false;
  bool noStale = false;
  std::string thinltoJobs;
  unsigned jobs = 0;
  double compileTimeoutSeconds = 600;
  bool explain = false;
};

void say(const std::string& message) {
  std::fprintf(stderr, "mlgo-env launch: %s\n", message.c_str());
  std::fflush(stderr);
}

/// What answers a call's compiles: a table (opened once per call), a
/// policy, or both (the policy then answers what the table lacks).
struct Answering {
  std::optional<launch::TuningTable> table;
  std::optional<policy::Policy> policy;
};

/// One compile of `source` (writing `output`, as the build names it; for a
/// source of a compile-and-link its module's name) through the table
/// (mlgo/launch/tuned_launch.h). Returns the exit code.
int compileWithTable(const LaunchFlags& flags, const launch::LaunchOptions& options,
                     const Answering& answering, const std::string& source,
                     const launch::TunedLaunch& where, support::CleanupScope& scope) {
  const policy::Policy* fallback = answering.policy ? &*answering.policy : nullptr;
  launch::TunedLaunch tuned = where;
  tuned.table = &*answering.table;
  tuned.fallback = fallback;
  tuned.stale = !flags.noStale;
  if (!flags.noLog)
    tuned.log = flags.log.empty() ? std::filesystem::path(flags.tuning) / "launch.log"
                                  : std::filesystem::path(flags.log);
  auto outcome = launch::runTuned(options, source, tuned, scope);
  if (!outcome.ok()) {
    say(source + ": " + outcome.error().message());
    return 2;
  }
  if (scope.cleanupBegan())
    return outcome->outcome.exitCode;
  if (outcome->outcome.error)
    say(outcome->outcome.error->message());
  else if (flags.explain)
    say(outcome->tuned   ? source + ": tuned decisions of module '" + outcome->module + "'"
        : outcome->stale ? fmt::format("{}: stale: {} of {} decisions from module '{}' by call "
                                       "site, the rest {} ({})",
                                       source, outcome->fromEntry, outcome->decisions,
                                       outcome->module, fallback ? "the policy's" : "clang's own",
                                       outcome->why)
                         : source + ": fallback: " + outcome->why);
  if (!outcome->note.empty())
    say(source + ": " + outcome->note);
  return outcome->outcome.exitCode;
}

/// One compile of `source` through the table, else the policy. Returns the
/// exit code.
int compileOne(const LaunchFlags& flags, const launch::LaunchOptions& options,
               const Answering& answering, const std::string& source,
               const launch::TunedLaunch& where, support::CleanupScope& scope) {
  if (answering.table)
    return compileWithTable(flags, options, answering, source, where, scope);
  auto outcome = launch::runInteractive(options, source, *answering.policy, scope);
  if (!outcome.ok()) {
    say(source + ": " + outcome.error().message());
    return 2;
  }
  // Once a signal is being handled, its line says what happened.
  if (outcome->error && !scope.cleanupBegan())
    say(outcome->error->message());
  return outcome->exitCode;
}

/// Several sources, or a compile-and-link (mlgo/launch/split_launch.h).
int runSplitCall(const LaunchFlags& flags, const launch::CallKind& kind,
                 const Answering& answering, support::CleanupScope& scope) {
  auto compile = [&](const launch::LaunchOptions& one, const std::string& source,
                     const std::string& module) {
    launch::TunedLaunch where;
    where.output = module;
    where.optLevel = kind.optLevel;
    if (kind.link)
      where.linkedInto = launch::linkOutput(kind);
    return compileOne(flags, one, answering, source, where, scope);
  };
  auto code = launch::runSplit(flags.options, kind, compile, scope);
  if (!code.ok()) {
    if (!scope.cleanupBegan())
      say(code.error().message());
    return 1;
  }
  return *code;
}

/// lld's Distributed ThinLTO jobs (mlgo/launch/thinlto_jobs.h).
int runThinLtoJobs(const LaunchFlags& flags) {
  std::signal(SIGPIPE, SIG_IGN);
  support::CleanupScope scope;
  InterruptGuard interrupts("mlgo-env launch", scope);
  unsigned parallel = flags.jobs ? flags.jobs : std::max(1u, std::thread::hardware_concurrency());
  Status st = launch::runThinLtoJobs(flags.thinltoJobs, parallel, scope);
  if (!st.ok()) {
    if (!scope.cleanupBegan())
      say(st.error().message());
    return 1;
  }
  return 0;
}

/// Reads the policy and opens the table the flags name; false (said, naming
/// `what`) when one cannot be read.
bool loadAnswering(const LaunchFlags& flags, const std::string& what, Answering& answering) {
  if (!flags.policy.empty()) {
    auto loaded = policy::Policy::load(flags.policy);
    if (!loaded.ok()) {
      say(what + ": " + loaded.error().message());
      return false;
    }
    answering.policy.emplace(std::move(*loaded));
  }
  if (!flags.tuning.empty()) {
    auto table = launch::TuningTable::open(flags.tuning);
    if (!table.ok()) {
      say(what + ": " + table.error().message());
      return false;
    }
    answering.table.emplace(std::move(*table));
  }
  return true;
}

/// What --explain says of a call.
std::string explainCall(const launch::CallKind& kind) {
  if (kind.interactive)
    return "interactive compile of " + kind.source;
  if (!kind.split)
    return "passes through: " + kind.reason;
  return fmt::format("splits the call: {} source{} compiled alone{}", kind.sources.size(),
                     kind.sources.size() == 1 ? "" : "s",
                     kind.link ? ", then linked into " + launch::linkOutput(kind) : std::string());
}

int runLaunch(LaunchFlags& flags) {
  if (!flags.thinltoJobs.empty())
    return runThinLtoJobs(flags);
  auto& options = flags.options;
  if (options.command.empty()) {
    say("no compiler: use mlgo-env launch --policy=FILE|--tuning=DIR -- COMPILER ARGS...");
    return 2;
  }
  if (flags.policy.empty() && flags.tuning.empty()) {  // --thinlto-jobs returned above
    say("give --policy=FILE, --tuning=DIR, or both (the policy then answers what the "
        "table does not have)");
    return 2;
  }
  if (!(flags.compileTimeoutSeconds > 0)) {
    say("--compile-timeout must be a positive number");
    return 2;
  }
  options.compileTimeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(flags.compileTimeoutSeconds * 1000)));
  std::span<const std::string> args(options.command.begin() + 1, options.command.end());
  launch::CallKind kind = launch::classifyCall(args);
  if (flags.explain)
    say(explainCall(kind));
  if (!kind.interactive && !kind.split) {
    Status st = launch::runPassThrough(options.command);
    say(st.error().message());
    return 127;
  }
  Answering answering;
  if (!loadAnswering(flags, kind.split ? launch::linkOutput(kind) : kind.source, answering))
    return 1;
  std::signal(SIGPIPE, SIG_IGN);
  support::CleanupScope scope;
  InterruptGuard interrupts("mlgo-env launch", scope);
  if (kind.split)
    return runSplitCall(flags, kind, answering, scope);
  launch::TunedLaunch where;
  where.output = kind.output;
  where.optLevel = kind.optLevel;
  return compileOne(flags, options, answering, kind.source, where, scope);
}

/// The launcher's options, on `mlgo-env launch` or on mlgo-env-launch itself.
void addLaunchOptions(CLI::App* launch, LaunchFlags& flags) {
  launch->add_option("--policy", flags.policy,
                     "the policy file (with --tuning: what answers modules the table lacks)");
  launch->add_option("--tuning", flags.tuning,
                     "a tuning directory (python -m mlgo_env.tune): each module gets its "
                     "recorded decisions");
  launch->add_option("--log", flags.log,
                     "with --tuning: where each compile's line goes (default: DIR/launch.log)");
  launch->add_flag("--no-log", flags.noLog, "with --tuning: write no log line");
  launch->add_flag("--no-stale", flags.noStale,
                   "with --tuning: a module whose stream changed gets the fallback, not its "
                   "entry's answers for its unchanged call sites");
  launch->add_option("--thinlto-jobs", flags.thinltoJobs,
                     "run the backend jobs lld's Distributed ThinLTO wrote to this file "
                     "(-fthinlto-distributor=mlgo-env-launch -Xthinlto-distributor=--thinlto-jobs)");
  launch->add_option("--jobs", flags.jobs, "with --thinlto-jobs: jobs at once (default: cores; at most 8)");
  launch->add_option("--problem", flags.options.problem,
                     "inlining | regalloc (default: the policy's problem)");
  launch
      ->add_option("--compile-timeout", flags.compileTimeoutSeconds,
                   "seconds the launcher waits on the compiler before killing it")
      ->capture_default_str();
  launch
      ->add_option("--max-observations", flags.options.maxObservations,
                   "decision requests one compile may make")
      ->capture_default_str();
  launch->add_option("--temp-dir", flags.options.tempDir,
                     "parent of the fifo directory (default: $TMPDIR or /tmp)");
  launch->add_flag("--explain", flags.explain,
                   "say on stderr whether the call is taken or passes through, and why");
  launch->add_option("command", flags.options.command, "-- COMPILER ARGS...")->expected(-1);
}

constexpr const char* kSummary =
    "compiler launcher: run a build's compiles with a policy answering "
    "(CC=\"mlgo-env launch --policy=p.json -- clang-22\")";

} // namespace

void addLaunchCommand(CLI::App& app, Action& action) {
  static LaunchFlags flags;
  auto* launch = app.add_subcommand("launch", kSummary);
  addLaunchOptions(launch, flags);
  launch->callback([&action] { action = [] { return runLaunch(flags); }; });
}

int launchProgram(int argc, char** argv) {
  CLI::App app{std::string("mlgo-env-launch: ") + kSummary, "mlgo-env-launch"};
  LaunchFlags flags;
  addLaunchOptions(&app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return runLaunch(flags);
}

} // namespace mlgo::cli
