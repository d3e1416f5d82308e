//===- trace/training_log_tracer.h - traces from clang's own logs -*- C++ -*-===//
///
/// \file
/// With a development-mode clang (dev_mode_probe.h), the default trace of a
/// register-allocation problem comes from clang itself: each module is
/// compiled once with the problem's training-log options, and clang's log
/// (per-function contexts, its features with its own decision as the last
/// feature) is re-emitted with `<module>:<function>` contexts and the trace's
/// rewards. The policy is clang's default heuristic, so each function's
/// default and policy scores are the same compile's, scored as episodes
/// score theirs (mlgo/env/score.h: its regalloc remarks, or its object under
/// the `executed` score), and every reward is relativeReward(s, s) = 0.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRAINING_LOG_TRACER_H
#define MLGO_TRACE_TRAINING_LOG_TRACER_H

#include "mlgo/env/environment.h"
#include "mlgo/protocol/training_log.h"
#include "module_tracer.h"

namespace mlgo::trace {

/// The trace header for logs with header `log`: its features (the last
/// must be the decision: a known action name, or the advice's name when the
/// log has one) and the float score `reward`. kUnsupported otherwise.
Result<protocol::LogHeader> traceHeaderFromTrainingLog(const protocol::LogHeader& log);

/// Compiles `module` with clang's training log on and renders its records.
/// It compiles what episodes compile (Environment::prepareModule): for the
/// register allocation problems, the module's optimised IR.
/// `header` is traceHeaderFromTrainingLog() of the probe's log; a module log
/// with other features is a kCompiler error.
Result<TracedModule> traceModuleFromTrainingLog(env::Environment& environment,
                                                const std::string& module,
                                                const env::EnvironmentOptions& options,
                                                const protocol::LogHeader& header);

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRAINING_LOG_TRACER_H
