//===- mlgo/trace/trace_runner.h - writing a trace --------------*- C++ -*-===//
///
/// \file
/// `mlgo-env trace`: runs a policy (trace_policy.h) over a seeded sample of
/// a corpus (module_selection.h), `jobs` modules at a time, and writes
///
///  - the trace (trace_header.h), to a temporary file beside `output` that
///    is renamed over it at the end. Each module's records are rendered in
///    memory once its episode has finished (module_trace.h) and appended
///    whole, in selection order, so the file does not depend on which
///    module finished first, and a module that fails leaves nothing in it;
///  - the CSV `<output>.csv` (`trace.log` -> `trace.log.csv`; appending,
///    rather than replacing the extension, can never name the trace
///    itself): `module,context,default_score,policy_score,reward`, one row
///    per trace context plus, for per-function problems, a module-total row
///    whose context is the module name (context_rewards.h).
///
/// Modules run in selection order; at most `window` modules may be finished
/// but not yet written (so memory stays bounded when an early module is
/// slow). A failing module (compile error, crash, timeout) is recorded in
/// the report with the reason and the run goes on. Only set-up errors (bad
/// options, clang unusable, output not writable) fail the whole run.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_RUNNER_H
#define MLGO_TRACE_TRACE_RUNNER_H

#include "mlgo/env/environment.h"
#include "mlgo/trace/module_selection.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::trace {

struct TraceOptions {
  /// The environment to run (problem, corpus, clang, jobs, cache, ...).
  /// includeDefaultFeature is forced on: a trace has all of clang's features.
  env::EnvironmentOptions environment;
  SelectionOptions selection;
  std::filesystem::path output;
  /// Empty = `<output>.csv`.
  std::filesystem::path csv;
  /// `default`, `fallback` or a policy file (trace_policy.h).
  std::string policy = "default";
  /// Finished-but-unwritten modules allowed; 0 = 4 * jobs.
  size_t window = 0;
};

struct ModuleFailure {
  std::string module;
  std::string message;
};

struct TraceReport {
  std::string problem;
  std::string policy;
  std::string developmentProbe; ///< What the development-mode probe said.
  std::filesystem::path output;
  std::filesystem::path csv;
  size_t selected = 0;
  size_t done = 0;                     ///< Modules written (with or without decisions).
  size_t withoutDecisions = 0;         ///< Done, but clang asked nothing.
  std::vector<ModuleFailure> failures; ///< In selection order.
  uint64_t observations = 0;
  uint64_t contexts = 0;
  uint64_t traceBytes = 0;
  double wallSeconds = 0;
  double hostCpuSeconds = 0;  ///< mlgo-env's own CPU (getrusage SELF) during the run.
  double childCpuSeconds = 0; ///< Reaped children's CPU (clang) during the run.
  /// Scores summed over the modules done, and the sum of their rewards
  /// (relativeReward per module): totals can be dominated by one hot
  /// function, the mean of per-module rewards cannot.
  double defaultTotal = 0;
  double policyTotal = 0;
  double moduleRewardSum = 0;
  double moduleRewardMean() const { return done == 0 ? 0 : moduleRewardSum / double(done); }
};

/// Progress callbacks, called from worker threads under the runner's lock
/// (one call at a time).
class TraceListener {
public:
  virtual ~TraceListener() = default;
  virtual void started(size_t modules) = 0;
  /// A module finished; `error` is empty on success.
  virtual void moduleFinished(const std::string& module, uint64_t observations,
                              const std::string& error) = 0;
};

/// A module a run would trace, and the plain compile of it (no MLGO flags):
/// the clang program then corpus::recompileArgs with `objectPlaceholder` as
/// the output file, for comparing against plain clang.
struct SelectedModule {
  std::string name;
  std::vector<std::string> plainCompile;
};

/// The modules a run with these options traces, in trace order.
Result<std::vector<SelectedModule>> selectedModules(const TraceOptions& options,
                                                    const std::string& objectPlaceholder = "-");

/// Runs the trace. See the file comment.
Result<TraceReport> runTrace(const TraceOptions& options, TraceListener* listener = nullptr);

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRACE_RUNNER_H
