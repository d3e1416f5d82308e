//===- trace/action_codec.h - actions as tensors -----------------*- C++ -*-===//
///
/// \file
/// A trace stores the action taken at each observation as one more feature
/// tensor, with the advice spec clang declared. These convert between an
/// env::ActionValue and that tensor's bytes.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_ACTION_CODEC_H
#define MLGO_TRACE_ACTION_CODEC_H

#include "mlgo/env/problem.h"
#include "mlgo/protocol/tensor_spec.h"

#include <cstddef>
#include <span>

namespace mlgo::trace {

/// Writes `action` into `out` (spec.byteSize() bytes; every element of a
/// multi-element spec gets the same value). kInvalidArgument when the value
/// does not fit the spec's type.
Status encodeAction(const protocol::TensorSpec& spec, const env::ActionValue& action,
                    std::span<std::byte> out);

/// The first element of an action tensor: an integer for integer types, a
/// double for floating-point ones (so it re-encodes to the same bytes).
/// kInvalidArgument when `bytes` is not spec.byteSize() long or the spec is
/// empty, or a uint64 value does not fit in int64.
Result<env::ActionValue> decodeAction(const protocol::TensorSpec& spec,
                                      std::span<const std::byte> bytes);

} // namespace mlgo::trace

#endif // MLGO_TRACE_ACTION_CODEC_H
