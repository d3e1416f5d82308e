//===- protocol/advice.cc - encoding the host's answers -------------------===//
#include "mlgo/protocol/advice.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::protocol {
namespace {

template <typename T> void store(std::byte* out, size_t index, T value) {
  std::memcpy(out + index * sizeof(T), &value, sizeof(T));
}

template <typename T> bool fitsInteger(int64_t value) {
  if constexpr (std::is_same_v<T, uint64_t>)
    return value >= 0;
  else
    return value >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           value <= static_cast<int64_t>(std::numeric_limits<T>::max());
}

/// Range check of an integral double against integer type T.
template <typename T> bool fitsIntegral(double value) {
  if (!std::isfinite(value) || std::trunc(value) != value)
    return false;
  // 2^64 and 2^63 are exact doubles; compare against the half-open range.
  const double lo = std::is_signed_v<T> ? -std::ldexp(1.0, sizeof(T) * 8 - 1) : 0.0;
  const double hi = std::ldexp(1.0, sizeof(T) * 8 - (std::is_signed_v<T> ? 1 : 0));
  return value >= lo && value < hi;
}

Status checkShape(const TensorSpec& spec, size_t values, size_t outBytes) {
  if (values != spec.elementCount())
    return makeError(ErrorCode::kInvalidArgument, "advice '{}' takes {} value(s), got {}",
                     spec.name(), spec.elementCount(), values);
  if (outBytes != spec.byteSize())
    return makeError(ErrorCode::kInternal, "advice '{}': output buffer has {} bytes, needs {}",
                     spec.name(), outBytes, spec.byteSize());
  return Status::success();
}

Error notRepresentable(const TensorSpec& spec, std::string value) {
  return makeError(ErrorCode::kInvalidArgument, "advice '{}': value {} is not representable as {}",
                   spec.name(), value, spelling(spec.type()));
}

/// Whether `v` is representable in the advice's element type.
bool representable(ElementType type, int64_t v) {
  switch (type) {
  case ElementType::kInt8: return fitsInteger<int8_t>(v);
  case ElementType::kUInt8: return fitsInteger<uint8_t>(v);
  case ElementType::kInt16: return fitsInteger<int16_t>(v);
  case ElementType::kUInt16: return fitsInteger<uint16_t>(v);
  case ElementType::kInt32: return fitsInteger<int32_t>(v);
  case ElementType::kUInt32: return fitsInteger<uint32_t>(v);
  case ElementType::kUInt64: return fitsInteger<uint64_t>(v);
  case ElementType::kInt64:
  case ElementType::kFloat:
  case ElementType::kDouble: return true;
  }
  return false;
}

bool representable(ElementType type, double v) {
  switch (type) {
  case ElementType::kFloat:
    return !std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max();
  case ElementType::kDouble: return true;
  case ElementType::kInt8: return fitsIntegral<int8_t>(v);
  case ElementType::kUInt8: return fitsIntegral<uint8_t>(v);
  case ElementType::kInt16: return fitsIntegral<int16_t>(v);
  case ElementType::kUInt16: return fitsIntegral<uint16_t>(v);
  case ElementType::kInt32: return fitsIntegral<int32_t>(v);
  case ElementType::kUInt32: return fitsIntegral<uint32_t>(v);
  case ElementType::kInt64: return fitsIntegral<int64_t>(v);
  case ElementType::kUInt64: return fitsIntegral<uint64_t>(v);
  }
  return false;
}

/// Converts one checked value to the element type and stores it.
template <typename V> void storeAs(ElementType type, std::byte* dst, size_t i, V v) {
  switch (type) {
  case ElementType::kFloat: store(dst, i, static_cast<float>(v)); break;
  case ElementType::kDouble: store(dst, i, static_cast<double>(v)); break;
  case ElementType::kInt8: store(dst, i, static_cast<int8_t>(v)); break;
  case ElementType::kUInt8: store(dst, i, static_cast<uint8_t>(v)); break;
  case ElementType::kInt16: store(dst, i, static_cast<int16_t>(v)); break;
  case ElementType::kUInt16: store(dst, i, static_cast<uint16_t>(v)); break;
  case ElementType::kInt32: store(dst, i, static_cast<int32_t>(v)); break;
  case ElementType::kUInt32: store(dst, i, static_cast<uint32_t>(v)); break;
  case ElementType::kInt64: store(dst, i, static_cast<int64_t>(v)); break;
  case ElementType::kUInt64: store(dst, i, static_cast<uint64_t>(v)); break;
  }
}

/// Checks every value first, so nothing is written on error.
template <typename V>
Status encodeValues(const TensorSpec& spec, std::span<const V> values, std::span<std::byte> out) {
  MLGO_TRY(checkShape(spec, values.size(), out.size()));
  for (V v : values)
    if (!representable(spec.type(), v))
      return notRepresentable(spec, fmt::format("{}", v));
  for (size_t i = 0; i < values.size(); ++i)
    storeAs(spec.type(), out.data(), i, values[i]);
  return Status::success();
}

} // namespace

Status encodeAdvice(const TensorSpec& spec, std::span<const int64_t> values,
                    std::span<std::byte> out) {
  return encodeValues(spec, values, out);
}

Status encodeAdvice(const TensorSpec& spec, std::span<const double> values,
                    std::span<std::byte> out) {
  return encodeValues(spec, values, out);
}

Result<std::vector<std::byte>> encodeScalarAdvice(const TensorSpec& spec, int64_t value) {
  std::vector<std::byte> bytes(spec.byteSize());
  MLGO_TRY(encodeAdvice(spec, std::span<const int64_t>(&value, 1), bytes));
  return bytes;
}

Result<std::vector<std::byte>> encodeScalarAdvice(const TensorSpec& spec, double value) {
  std::vector<std::byte> bytes(spec.byteSize());
  MLGO_TRY(encodeAdvice(spec, std::span<const double>(&value, 1), bytes));
  return bytes;
}

} // namespace mlgo::protocol
