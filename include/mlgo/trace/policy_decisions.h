//===- mlgo/trace/policy_decisions.h - a policy over a recorded log -*- C++ -*-===//
///
/// \file
/// Runs a policy file (mlgo/policy/policy_file.h) over every observation of a
/// TrainingLogger log (a trace, or a capture of clang's stream), in order, as
/// `mlgo-env policy decide` does: the C++ side of the check that the C++ and
/// Python runners decide alike on the same observations.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_POLICY_DECISIONS_H
#define MLGO_TRACE_POLICY_DECISIONS_H

#include "mlgo/policy/policy_runner.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

namespace mlgo::trace {

struct PolicyDecision {
  std::string_view context; ///< The observation's context (valid during the call).
  int64_t id = 0;           ///< Its number within the context.
  int64_t action = 0;       ///< What the policy answers.
};

/// Reads the log at `path` ("-" = standard input), binds `policy` to its
/// header's features (a trace's recorded action among them, which a policy
/// never names) and calls `decided` for each observation. Errors: the
/// binding's (a feature the policy needs is missing), the reader's (naming
/// the byte offset), or the first one `decided` returns.
Status decideOverLog(const std::filesystem::path& path, const policy::Policy& policy,
                     const std::function<Status(const PolicyDecision&)>& decided);

} // namespace mlgo::trace

#endif // MLGO_TRACE_POLICY_DECISIONS_H
