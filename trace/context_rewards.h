//===- trace/context_rewards.h - scores and rewards per context --*- C++ -*-===//
///
/// \file
/// Turns the summary of a finished episode into one row per trace context:
///
///  - module-level problems (inlining, scored by executable bytes): one row,
///    context `<module>`, with the module's default and policy scores and
///    reward = relativeReward(policy, default) (env/score.h);
///  - per-function problems (register allocation): one row per function
///    that made decisions, context `<module>:<function>`, with that
///    function's scores from the episode summary and reward =
///    relativeReward(policy, default). clang writes no SpillReloadCopies
///    remark for a function without spills, reloads or copies, and such a
///    function scores 0 (env/score.h): so a function the default compile did
///    not report has default score 0, and one the interactive compile did
///    not report has policy score 0. (The episode summary lists only the
///    functions the interactive compile reported; for the others the
///    default score is not available from it and is taken as 0 too.) Then
///    one row for the module total, context `<module>`.
///
/// In a trace, the reward of a context is written after its last
/// observation; the module-total row of a per-function problem appears only
/// in the CSV.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_CONTEXT_REWARDS_H
#define MLGO_TRACE_CONTEXT_REWARDS_H

#include "mlgo/env/environment.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::trace {

struct ContextResult {
  std::string context; ///< Trace context name.
  double defaultScore = 0;
  double policyScore = 0;
  double reward = 0;
  /// False for the module-total row of a per-function problem.
  bool inTrace = true;
};

/// Whether the problem's contexts are functions (register allocation) or the
/// whole module (inlining).
bool perFunctionContexts(const env::Problem& problem);

/// The rows for `module` (see the file comment). `functions`: the functions
/// that made decisions, in the order they first did (ignored for
/// module-level problems).
std::vector<ContextResult> contextResults(const env::Problem& problem, std::string_view module,
                                          const env::EpisodeSummary& summary,
                                          std::span<const std::string> functions);

/// CSV header and rows: module,context,default_score,policy_score,reward.
std::string csvHeader();
void appendCsvRows(std::string& out, std::string_view module, std::span<const ContextResult> rows);
/// A CSV field, quoted when it holds a comma, quote, CR or LF.
void appendCsvField(std::string& out, std::string_view field);

} // namespace mlgo::trace

#endif // MLGO_TRACE_CONTEXT_REWARDS_H
