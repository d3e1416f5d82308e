//===- env/problems_impl.h - the problem instances --------------*- C++ -*-===//
///
/// \file
/// Private to env/: the problem objects and helpers shared by their files.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_PROBLEMS_IMPL_H
#define MLGO_ENV_PROBLEMS_IMPL_H

#include "mlgo/env/problem.h"

#include <optional>

namespace mlgo::env::detail {

const Problem& inliningProblem();
const Problem& evictionProblem();
const Problem& priorityProblem();

/// The action as an exact integer, if it is one (an integral double counts).
std::optional<int64_t> integralAction(const ActionValue& action);
/// The action as a double.
double numericAction(const ActionValue& action);
/// Element `index` of an integer or floating tensor as int64 (truncating).
int64_t integerElement(const protocol::TensorSpec& spec, std::span<const std::byte> tensor,
                       size_t index);
/// kUnsupported unless the header has a one-element advice tensor whose
/// type passes `typeOk`; `expected` describes what was wanted.
Status checkScalarAdvice(std::string_view problem, const protocol::LogHeader& header,
                         bool (*typeOk)(protocol::ElementType), std::string_view expected);
/// All feature indices, in order, except `hidden` (if any).
std::vector<size_t> allFeaturesExcept(const protocol::LogHeader& header,
                                      std::optional<size_t> hidden);

} // namespace mlgo::env::detail

#endif // MLGO_ENV_PROBLEMS_IMPL_H
