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

} // namespace

Status encodeAdvice(const TensorSpec& spec, std::span<const int64_t> values,
                    std::span<std::byte> out) {
  MLGO_TRY(checkShape(spec, values.size(), out.size()));
  for (int64_t v : values) {
    bool ok = true;
    switch (spec.type()) {
    case ElementType::kInt8: ok = fitsInteger<int8_t>(v); break;
    case ElementType::kUInt8: ok = fitsInteger<uint8_t>(v); break;
    case ElementType::kInt16: ok = fitsInteger<int16_t>(v); break;
    case ElementType::kUInt16: ok = fitsInteger<uint16_t>(v); break;
    case ElementType::kInt32: ok = fitsInteger<int32_t>(v); break;
    case ElementType::kUInt32: ok = fitsInteger<uint32_t>(v); break;
    case ElementType::kUInt64: ok = fitsInteger<uint64_t>(v); break;
    case ElementType::kInt64:
    case ElementType::kFloat:
    case ElementType::kDouble: break;
    }
    if (!ok)
      return notRepresentable(spec, std::to_string(v));
  }
  std::byte* dst = out.data();
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v = values[i];
    switch (spec.type()) {
    case ElementType::kFloat: store(dst, i, static_cast<float>(v)); break;
    case ElementType::kDouble: store(dst, i, static_cast<double>(v)); break;
    case ElementType::kInt8: store(dst, i, static_cast<int8_t>(v)); break;
    case ElementType::kUInt8: store(dst, i, static_cast<uint8_t>(v)); break;
    case ElementType::kInt16: store(dst, i, static_cast<int16_t>(v)); break;
    case ElementType::kUInt16: store(dst, i, static_cast<uint16_t>(v)); break;
    case ElementType::kInt32: store(dst, i, static_cast<int32_t>(v)); break;
    case ElementType::kUInt32: store(dst, i, static_cast<uint32_t>(v)); break;
    case ElementType::kInt64: store(dst, i, v); break;
    case ElementType::kUInt64: store(dst, i, static_cast<uint64_t>(v)); break;
    }
  }
  return Status::success();
}

Status encodeAdvice(const TensorSpec& spec, std::span<const double> values,
                    std::span<std::byte> out) {
  MLGO_TRY(checkShape(spec, values.size(), out.size()));
  for (double v : values) {
    bool ok = true;
    switch (spec.type()) {
    case ElementType::kFloat:
      ok = !std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max();
      break;
    case ElementType::kDouble: break;
    case ElementType::kInt8: ok = fitsIntegral<int8_t>(v); break;
    case ElementType::kUInt8: ok = fitsIntegral<uint8_t>(v); break;
    case ElementType::kInt16: ok = fitsIntegral<int16_t>(v); break;
    case ElementType::kUInt16: ok = fitsIntegral<uint16_t>(v); break;
    case ElementType::kInt32: ok = fitsIntegral<int32_t>(v); break;
    case ElementType::kUInt32: ok = fitsIntegral<uint32_t>(v); break;
    case ElementType::kInt64: ok = fitsIntegral<int64_t>(v); break;
    case ElementType::kUInt64: ok = fitsIntegral<uint64_t>(v); break;
    }
    if (!ok)
      return notRepresentable(spec, fmt::format("{}", v));
  }
  std::byte* dst = out.data();
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    switch (spec.type()) {
    case ElementType::kFloat: store(dst, i, static_cast<float>(v)); break;
    case ElementType::kDouble: store(dst, i, v); break;
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
  return Status::success();
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
