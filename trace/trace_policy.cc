//===- trace/trace_policy.cc - who decides in a trace -----------------------===//
#include "trace_policy.h"

namespace mlgo::trace {

Result<env::ActionValue> TracePolicy::choose(const env::StepResult& step) const {
  const std::optional<env::ActionValue>& action =
      source == PolicySource::kClangDefault ? step.defaultAction : step.fallbackAction;
  if (!action)
    return makeError(ErrorCode::kUnsupported, "policy {}: the decision request carries no {}", name,
                     source == PolicySource::kClangDefault ? "default decision"
                                                           : "fallback action");
  return *action;
}

std::string fallbackPolicyName(const env::Problem& problem, const env::ProblemOptions& options,
                               std::string_view defaultSource) {
  if (problem.name() == "inlining")
    return "inlining_default";
  if (problem.name() == "regalloc")
    return defaultSource.empty() ? "evict-none-else-first-valid" : std::string(defaultSource);
  if (problem.name() == "regalloc-priority")
    return options.priorityFallback == "constant"
               ? fmt::format("constant-priority={}", options.constantPriority)
               : fmt::format("priority={}", options.priorityFallback);
  return "host-fallback";
}

Result<TracePolicy> resolvePolicy(const env::Problem& problem, std::string_view requested,
                                  const env::ProblemOptions& options, bool developmentLog,
                                  std::string_view defaultSource) {
  if (requested.empty())
    requested = "default";
  TracePolicy policy;
  if (requested == "fallback") {
    policy.source = PolicySource::kFallback;
    policy.name = "fallback:" + fallbackPolicyName(problem, options, defaultSource);
    return policy;
  }
  if (requested != "default")
    return makeError(ErrorCode::kInvalidArgument,
                     "--policy '{}' is unknown: use 'default' (the problem's default heuristic) "
                     "or 'fallback' (the host fallback policy)",
                     requested);
  if (problem.name() == "inlining") {
    policy.source = PolicySource::kClangDefault;
    policy.name = "clang-default:inlining_default";
  } else if (defaultSource.starts_with("clang-default:")) {
    policy.source = PolicySource::kClangDefault;
    policy.name = std::string(defaultSource);
  } else if (developmentLog) {
    policy.source = PolicySource::kTrainingLog;
    policy.name = "clang-training-log";
  } else if (!defaultSource.empty()) {
    policy.source = PolicySource::kClangDefault;
    policy.name = std::string(defaultSource);
  } else {
    policy.source = PolicySource::kFallback;
    policy.name = "fallback:" + fallbackPolicyName(problem, options);
  }
  return policy;
}

} // namespace mlgo::trace
