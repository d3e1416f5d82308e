//===- trace/module_tracer.h - one module through a policy -------*- C++ -*-===//
///
/// \file
/// Plays one episode of an environment on a named module, answering every
/// decision with a trace policy, and renders the module's trace records and
/// CSV rows. Nothing is rendered unless the episode completes, so a failure
/// leaves no partial output.
///
/// Thread-safe as far as the Environment is (one call per episode).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_MODULE_TRACER_H
#define MLGO_TRACE_MODULE_TRACER_H

#include "mlgo/env/environment.h"
#include "mlgo/protocol/training_log.h"
#include "module_trace.h"
#include "trace_policy.h"

#include <functional>
#include <string>

namespace mlgo::trace {

struct TracedModule {
  std::string records; ///< The module's trace records (no header).
  std::string csv;     ///< Its CSV rows (no header line).
  uint64_t observations = 0;
  uint64_t contexts = 0;
  double defaultScore = 0; ///< The module's scores (whole compile).
  double policyScore = 0;
};

/// Answers one decision request; an error ends the episode with it.
using DecisionFunction = std::function<Result<env::ActionValue>(const env::StepResult&)>;

/// Plays `module` to the end with `decide`, calling `observed` after each
/// decision with the request and the action taken. Returns the final step
/// (its summary set). The episode is closed on every error.
Result<env::StepResult>
playEpisode(env::Environment& environment, const std::string& module,
            const DecisionFunction& decide,
            const std::function<Status(const env::StepResult&, const env::ActionValue&)>& observed);

/// Finishes a traced module once its episode summary is known: per-context
/// rewards, the finished records and the CSV rows.
Result<TracedModule> finishTracedModule(ModuleTraceBuilder& builder, const env::Problem& problem,
                                        std::string_view module,
                                        const env::EpisodeSummary& summary);

/// Traces `module` with `policy` (kClangDefault or kFallback). `header` is
/// the trace header: the environment's observation specs then the action.
/// `buffer` is reused for the records (capacity kept, contents dropped).
Result<TracedModule> traceModule(env::Environment& environment, const std::string& module,
                                 const TracePolicy& policy, const protocol::LogHeader& header,
                                 std::string buffer = {});

} // namespace mlgo::trace

#endif // MLGO_TRACE_MODULE_TRACER_H
