//===- env/problem.cc - the problem registry and shared rules ---------------===//
#include "mlgo/env/problem.h"

#include "mlgo/protocol/advice.h"
#include "problems_impl.h"

#include <cmath>

namespace mlgo::env {

std::string formatAction(const ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    return std::to_string(*i);
  return fmt::format("{}", std::get<double>(action));
}

Status BoundProblem::encode(const ActionValue& action, std::span<std::byte> out) const {
  if (const auto* i = std::get_if<int64_t>(&action))
    return protocol::encodeAdvice(actionSpec(), std::span<const int64_t>(i, 1), out);
  const double& d = std::get<double>(action);
  return protocol::encodeAdvice(actionSpec(), std::span<const double>(&d, 1), out);
}

std::string Problem::rewardDefinition(std::string_view regallocScore) const {
  if (scoreKind() == ScoreKind::kTextBytes)
    return "1 - policy/default, where a score is the bytes of the object's executable "
           "sections and default is a plain compile with the same flags; 0 on intermediate "
           "steps";
  if (regallocScore == "executed")
    return "1 - policy/default, where a score is the instructions the object's code is "
           "estimated to execute (each block's instructions times its frequency relative to "
           "its function's entry, times the function's profile entry count, or 1 without a "
           "profile; from the object's block map) summed over the module's functions, and "
           "default is a plain compile with the same flags; 0 on intermediate steps";
  if (regallocScore == "instructions")
    return "1 - policy/default, where a score is spills + reloads + copies (frequency-weighted, "
           "folded spills and reloads 0: an estimate of the instructions they add) summed over "
           "the module's functions from clang's regalloc remarks, and default is a plain "
           "compile with the same flags; 0 on intermediate steps";
  return "1 - policy/default, where a score is 4*reloads + 1*spills + 0.2*copies "
         "(frequency-weighted, folded operations counted like their kind) summed over the "
         "module's functions from clang's regalloc remarks, and default is a plain compile "
         "with the same flags; 0 on intermediate steps";
}

std::span<const Problem* const> allProblems() {
  static const Problem* const kProblems[] = {&detail::inliningProblem(), &detail::evictionProblem(),
                                             &detail::priorityProblem()};
  return kProblems;
}

Result<const Problem*> findProblem(std::string_view name) {
  std::string names;
  for (const Problem* p : allProblems()) {
    if (p->name() == name)
      return p;
    names += names.empty() ? "" : ", ";
    names += p->name();
  }
  return makeError(ErrorCode::kInvalidArgument, "unknown problem '{}' (known problems: {})", name,
                   names);
}

namespace detail {

std::optional<int64_t> integralAction(const ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    return *i;
  double d = std::get<double>(action);
  // [-2^63, 2^63) holds every double that converts exactly.
  if (!std::isfinite(d) || std::trunc(d) != d || d < -std::ldexp(1.0, 63) ||
      d >= std::ldexp(1.0, 63))
    return std::nullopt;
  return static_cast<int64_t>(d);
}

double numericAction(const ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    return static_cast<double>(*i);
  return std::get<double>(action);
}

int64_t integerElement(const protocol::TensorSpec& spec, std::span<const std::byte> tensor,
                       size_t index) {
  using protocol::ElementType;
  switch (spec.type()) {
  case ElementType::kInt64:
    return protocol::loadElement<int64_t>(tensor.data(), index);
  case ElementType::kInt32:
    return protocol::loadElement<int32_t>(tensor.data(), index);
  default:
    return static_cast<int64_t>(protocol::elementAsDouble(spec.type(), tensor.data(), index));
  }
}

Status checkScalarAdvice(std::string_view problem, const protocol::LogHeader& header,
                         bool (*typeOk)(protocol::ElementType), std::string_view expected) {
  if (!header.advice)
    return makeError(ErrorCode::kUnsupported, "{}: clang's header declares no advice tensor",
                     problem);
  const protocol::TensorSpec& advice = *header.advice;
  if (advice.elementCount() != 1 || !typeOk(advice.type()))
    return makeError(ErrorCode::kUnsupported,
                     "{}: clang's advice tensor is {}, but this problem needs {}", problem,
                     advice.toJson(), expected);
  return Status::success();
}

std::vector<size_t> allFeaturesExcept(const protocol::LogHeader& header,
                                      std::optional<size_t> hidden) {
  std::vector<size_t> visible;
  for (size_t i = 0; i < header.features.size(); ++i)
    if (!hidden || *hidden != i)
      visible.push_back(i);
  return visible;
}

} // namespace detail
} // namespace mlgo::env
