//===- src/cli/trace_commands.cc - trace and replay ------------------------===//
///
/// `mlgo-env trace` writes a default-policy trace of a corpus sample;
/// `mlgo-env replay` prints, exports, summarises or verifies a log.
/// Both take the environment flags (env_options.h). Exit codes: 0 success,
/// 1 failure (for replay: unreadable or corrupted log, after printing what
/// was readable, or a verification divergence), 2 bad command line, 3 (trace)
/// the trace was written but some modules failed.
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"
#include "cli/env_options.h"

#include "cli/interrupt.h"

#include "mlgo/env/score.h"
#include "mlgo/trace/log_printer.h"
#include "mlgo/trace/log_summary.h"
#include "mlgo/trace/progress.h"
#include "mlgo/trace/trace_runner.h"
#include "mlgo/trace/trace_verifier.h"

#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace mlgo::cli {
namespace {

struct TraceFlags {
  EnvironmentFlags env;
  trace::TraceOptions trace;
  bool dryRun = false;
  bool printCommands = false;
  bool noProgress = false;
  std::string shard;
};

struct ReplayFlags {
  EnvironmentFlags env;
  std::string file;
  std::string format = "text";
  bool summary = false;
  bool verify = false;
};

int usage(const Error& error) {
  std::fprintf(stderr, "mlgo-env: %s\n", error.message().c_str());
  return 2;
}

int failure(const Error& error) {
  std::fprintf(stderr, "mlgo-env: %s\n", error.message().c_str());
  return 1;
}

int printSelection(const trace::TraceOptions& options, bool commands) {
  auto modules = trace::selectedModules(options, "OBJECT");
  if (!modules.ok())
    return failure(modules.error());
  for (const auto& module : *modules) {
    if (!commands) {
      std::printf("%s\n", module.name.c_str());
      continue;
    }
    // One JSON object per line: the module and its plain compile, whose
    // output file is the argument "OBJECT".
    std::string line = "{\"module\":";
    trace::appendJsonString(line, module.name);
    line += ",\"argv\":[";
    for (size_t i = 0; i < module.plainCompile.size(); ++i) {
      if (i != 0)
        line += ',';
      trace::appendJsonString(line, module.plainCompile[i]);
    }
    line += "]}\n";
    std::fputs(line.c_str(), stdout);
  }
  return 0;
}

void printReport(const trace::TraceReport& r) {
  std::printf("trace: problem %s, policy %s\n", r.problem.c_str(), r.policy.c_str());
  if (!r.developmentProbe.empty())
    std::printf("  development-mode clang: %s\n", r.developmentProbe.c_str());
  std::printf("  modules: %zu selected, %zu done (%zu without decisions), %zu failed\n", r.selected,
              r.done, r.withoutDecisions, r.failures.size());
  std::printf("  observations: %llu in %llu contexts; %llu bytes -> %s; scores -> %s\n",
              static_cast<unsigned long long>(r.observations),
              static_cast<unsigned long long>(r.contexts),
              static_cast<unsigned long long>(r.traceBytes), r.output.c_str(), r.csv.c_str());
  if (r.done > 0)
    std::printf("  scores: policy %.6g, default %.6g (total reward %.5f); mean of per-module "
                "rewards %.5f over %zu modules\n",
                r.policyTotal, r.defaultTotal, env::relativeReward(r.policyTotal, r.defaultTotal),
                r.moduleRewardMean(), r.done);
  double share = r.childCpuSeconds > 0 ? 100.0 * r.hostCpuSeconds / r.childCpuSeconds : 0.0;
  std::printf("  time: %.2f s wall; cpu: mlgo-env %.3f s, clang %.2f s (mlgo-env = %.2f%% of "
              "clang)\n",
              r.wallSeconds, r.hostCpuSeconds, r.childCpuSeconds, share);
  for (const auto& failure : r.failures)
    std::printf("  failed: %s: %s\n", failure.module.c_str(), failure.message.c_str());
}

/// A trace records one channel's stream: the priorities a file answers on
/// the other would be missing from it, and its replay would differ.
Status refuseFixedPriorities(const env::EnvironmentOptions& options, std::string_view command) {
  if (options.fixedPriorities.empty())
    return Status::success();
  return makeError(ErrorCode::kInvalidArgument,
                   "{}: --fixed-priorities is not recorded in a trace (the priorities it "
                   "answers are the host's, on a channel the trace does not hold); run without it",
                   command);
}

int runTraceCommand(TraceFlags& flags) {
  auto options = flags.env.finish();
  if (!options.ok())
    return usage(options.error());
  if (Status refused = refuseFixedPriorities(*options, "trace"); !refused.ok())
    return usage(refused.error());
  flags.trace.environment = *options;
  flags.trace.selection.seed = options->sampler.seed;
  if (!flags.shard.empty()) {
    Status shard = trace::parseShard(flags.shard, flags.trace.selection);
    if (!shard.ok())
      return usage(shard.error());
  }
  if (flags.dryRun || flags.printCommands)
    return printSelection(flags.trace, flags.printCommands);
  if (flags.trace.output.empty())
    return usage(makeError(ErrorCode::kInvalidArgument, "trace: --output is required"));
  std::signal(SIGPIPE, SIG_IGN);
  auto scope = std::make_shared<support::CleanupScope>();
  flags.trace.environment.cleanup = scope;
  InterruptGuard interrupts("mlgo-env trace", *scope);
  trace::TerminalProgress progress(stderr, !flags.noProgress && ::isatty(STDERR_FILENO) == 1,
                                   scope.get());
  auto report = trace::runTrace(flags.trace, &progress);
  progress.clear();
  if (!report.ok())
    return report.error().code() == ErrorCode::kInvalidArgument ? usage(report.error())
                                                                : failure(report.error());
  printReport(*report);
  return report->failures.empty() ? 0 : 3;
}

int runVerify(const ReplayFlags& flags, bool problemGiven) {
  auto options = flags.env.finish();
  if (!options.ok())
    return usage(options.error());
  if (Status refused = refuseFixedPriorities(*options, "replay --verify"); !refused.ok())
    return usage(refused.error());
  trace::VerifyOptions verify;
  verify.trace = flags.file;
  verify.environment = *options;
  verify.problemGiven = problemGiven;
  auto scope = std::make_shared<support::CleanupScope>();
  verify.environment.cleanup = scope;
  InterruptGuard interrupts("mlgo-env replay", *scope);
  auto report = trace::verifyTrace(verify);
  if (!report.ok())
    return failure(report.error());
  if (report->divergence) {
    std::fprintf(
        stderr, "mlgo-env: replay differs from the trace after %llu matching modules: %s\n",
        static_cast<unsigned long long>(report->modules), report->divergence->message().c_str());
    return 1;
  }
  std::printf("verified: %s trace %s matches clang: %llu modules, %llu observations, %llu "
              "outcomes (%.2f s)\n",
              report->problem.c_str(), flags.file.c_str(),
              static_cast<unsigned long long>(report->modules),
              static_cast<unsigned long long>(report->observations),
              static_cast<unsigned long long>(report->outcomes), report->wallSeconds);
  std::printf("  scores: policy %.6g, default %.6g (total reward %.5f); mean of per-module "
              "rewards %.5f\n",
              report->policyTotal, report->defaultTotal,
              env::relativeReward(report->policyTotal, report->defaultTotal),
              report->moduleRewardMean());
  return 0;
}

int runReplay(const ReplayFlags& flags, bool problemGiven) {
  if (flags.verify)
    return runVerify(flags, problemGiven);
  auto format = trace::parsePrintFormat(flags.format);
  if (!format.ok())
    return usage(format.error());
  if (flags.summary) {
    if (*format == trace::PrintFormat::kCsv)
      return usage(
          makeError(ErrorCode::kInvalidArgument, "--summary prints text or json, not csv"));
    trace::SummaryVisitor visitor;
    Status read = trace::readLog(flags.file, visitor);
    trace::LogSummary summary = visitor.result();
    std::string text = *format == trace::PrintFormat::kJson ? trace::formatSummaryJson(summary)
                                                            : trace::formatSummaryText(summary);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return read.ok() ? 0 : failure(read.error());
  }
  auto printer = trace::makeLogPrinter(*format, stdout);
  Status read = trace::readLog(flags.file, *printer);
  std::optional<Error> error;
  if (!read.ok())
    error = read.error();
  Status done = printer->finish(error);
  if (error)
    return failure(*error);
  return done.ok() ? 0 : failure(done.error());
}

} // namespace

void addTraceCommands(CLI::App& app, Action& action) {
  static TraceFlags traceFlags;
  auto* trace = app.add_subcommand(
      "trace", "run the default policy over a corpus sample and write a TrainingLogger trace");
  traceFlags.env.addTo(trace);
  trace->add_option("--output", traceFlags.trace.output, "the trace file (its CSV: <output>.csv)");
  trace->add_option("--csv", traceFlags.trace.csv,
                    "the per-context score CSV (default: <output>.csv)");
  trace
      ->add_option("--sampling-rate,--sampling_rate", traceFlags.trace.selection.samplingRate,
                   "fraction of the (filtered) modules to trace, in [0, 1]")
      ->capture_default_str();
  trace->add_option("--module_filter,--module-filter", traceFlags.trace.selection.moduleFilter,
                    "regular expression a module name must match entirely");
  trace
      ->add_option("--policy", traceFlags.trace.policy,
                   "default (clang's heuristic, or the named host policy when clang does not "
                   "expose it) | fallback")
      ->capture_default_str();
  trace->add_option("--shard", traceFlags.shard,
                    "K/N: trace only shard K of N of the sample (every N-th module of the "
                    "trace order, from the K-th); the N shards together are the whole sample");
  trace->add_flag("--dry-run", traceFlags.dryRun, "print the selected modules and stop");
  trace->add_flag("--print-commands", traceFlags.printCommands,
                  "print each selected module's plain compile as a JSON line and stop");
  trace->add_flag("--no-progress", traceFlags.noProgress, "no progress line on the terminal");
  trace->callback([&action] { action = [] { return runTraceCommand(traceFlags); }; });

  static ReplayFlags replayFlags;
  auto* replay = app.add_subcommand(
      "replay", "print, export, summarise or verify a trace or any TrainingLogger log");
  replay->add_option("file", replayFlags.file, "the log (- = standard input)")->required();
  replay->add_option("--format", replayFlags.format, "text | json | csv")->capture_default_str();
  replay->add_flag("--summary", replayFlags.summary,
                   "contexts, observations, action histogram, reward statistics");
  replay->add_flag("--verify", replayFlags.verify,
                   "re-drive clang with the recorded actions and check observations and scores "
                   "(the problem, corpus, recompile flag rules and IR2Vec vocabulary come from "
                   "the trace's header unless given)");
  replayFlags.env.addTo(replay);
  replay->callback([&action, replay] {
    bool problemGiven = replay->get_option("--problem")->count() > 0;
    action = [problemGiven] { return runReplay(replayFlags, problemGiven); };
  });
}

} // namespace mlgo::cli
