//===- trace/trace_policy.cc - who decides in a trace -----------------------===//
#include "trace_policy.h"

namespace mlgo::trace {

Status TracePolicy::bind(const env::EnvironmentDescription& description) {
  if (source != PolicySource::kFile)
    return Status::success();
  auto made = file->bind(description.observationSpecs);
  if (!made.ok())
    return made.error();
  bound = std::make_shared<const policy::BoundPolicy>(std::move(*made));
  offsets = description.observationOffsets;
  return Status::success();
}

Result<env::ActionValue> TracePolicy::choose(const env::StepResult& step) const {
  if (source == PolicySource::kFile) {
    if (!bound)
      return makeError(ErrorCode::kInternal, "policy {}: not bound to the observations", name);
    const std::vector<std::byte>& bytes = step.observation.bytes;
    std::vector<std::span<const std::byte>> tensors;
    tensors.reserve(offsets.size());
    for (size_t i = 0; i < offsets.size(); ++i) {
      size_t end = i + 1 < offsets.size() ? offsets[i + 1] : bytes.size();
      tensors.emplace_back(bytes.data() + offsets[i], end - offsets[i]);
    }
    return env::ActionValue(bound->decide(tensors));
  }
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
  if (requested != "default") {
    std::filesystem::path path(requested);
    auto file = policy::Policy::load(path);
    if (!file.ok())
      return file.error();
    MLGO_TRY(file->checkProblem(problem.name()));
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    policy.source = PolicySource::kFile;
    policy.name = "file:" + (ec ? path : absolute).lexically_normal().string();
    policy.file = std::make_shared<const policy::Policy>(std::move(*file));
    return policy;
  }
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
