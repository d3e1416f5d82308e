//===- mlgo/protocol/advice.h - encoding the host's answers -*- C++ -*-===//
///
/// \file
/// The host answers each observation with exactly the advice tensor's bytes
/// (spec from the header's "advice"), native little-endian, nothing else: no
/// newline, no framing. Too few bytes block clang; too many desynchronise it.
///
/// These functions turn values into those bytes, checking that each value is
/// representable in the advice's element type (an integer type takes only
/// integral values in range; float takes only values within float's range;
/// NaN is representable in floating types). Whether a value is a *valid
/// decision* is the problem's business (env/), not this layer's.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_ADVICE_H
#define MLGO_PROTOCOL_ADVICE_H

#include "mlgo/protocol/tensor_spec.h"

#include <span>

namespace mlgo::protocol {

/// Encodes `values` (one per element of `spec`) into `out`, which must hold
/// spec.byteSize() bytes. Writes nothing on error.
Status encodeAdvice(const TensorSpec& spec, std::span<const int64_t> values, std::span<std::byte> out);
Status encodeAdvice(const TensorSpec& spec, std::span<const double> values, std::span<std::byte> out);

/// Convenience for the common one-element advice: returns the bytes.
Result<std::vector<std::byte>> encodeScalarAdvice(const TensorSpec& spec, int64_t value);
Result<std::vector<std::byte>> encodeScalarAdvice(const TensorSpec& spec, double value);

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_ADVICE_H
