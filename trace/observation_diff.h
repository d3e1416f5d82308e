//===- trace/observation_diff.h - where two observations differ --*- C++ -*-===//
///
/// \file
/// Compares an observation recorded in a trace with the one clang sends
/// now, and describes the first difference by feature and element.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_OBSERVATION_DIFF_H
#define MLGO_TRACE_OBSERVATION_DIFF_H

#include "mlgo/protocol/tensor_spec.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace mlgo::trace {

struct FeatureDifference {
  std::string feature;  ///< Feature name.
  uint64_t element = 0; ///< Flat (row-major) element index within it.
  std::string expected; ///< The recorded value, as text.
  std::string actual;   ///< The value clang sent, as text.
};

/// The first element where `expected` and `actual` (features concatenated
/// in `specs` order) differ byte-wise, or nullopt when they are identical.
/// Sizes must both equal the specs' total (the caller checks).
std::optional<FeatureDifference> firstDifference(std::span<const protocol::TensorSpec> specs,
                                                 std::span<const std::byte> expected,
                                                 std::span<const std::byte> actual);

} // namespace mlgo::trace

#endif // MLGO_TRACE_OBSERVATION_DIFF_H
