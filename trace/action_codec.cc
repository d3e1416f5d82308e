//===- trace/action_codec.cc - actions as tensors ---------------------------===//
#include "action_codec.h"

#include "mlgo/protocol/advice.h"

#include <limits>
#include <vector>

namespace mlgo::trace {

namespace {

/// Encodes `count` copies of `value`; no allocation for the common scalar.
template <typename T>
Status encodeRepeated(const protocol::TensorSpec& spec, T value, size_t count,
                      std::span<std::byte> out) {
  if (count == 1)
    return protocol::encodeAdvice(spec, std::span<const T>(&value, 1), out);
  std::vector<T> values(count, value);
  return protocol::encodeAdvice(spec, std::span<const T>(values), out);
}

} // namespace

Status encodeAction(const protocol::TensorSpec& spec, const env::ActionValue& action,
                    std::span<std::byte> out) {
  size_t count = spec.elementCount();
  if (const auto* integer = std::get_if<int64_t>(&action)) {
    if (protocol::isFloatingPoint(spec.type()))
      return encodeRepeated(spec, static_cast<double>(*integer), count, out);
    return encodeRepeated(spec, *integer, count, out);
  }
  return encodeRepeated(spec, std::get<double>(action), count, out);
}

Result<env::ActionValue> decodeAction(const protocol::TensorSpec& spec,
                                      std::span<const std::byte> bytes) {
  if (spec.elementCount() == 0 || bytes.size() != spec.byteSize())
    return makeError(ErrorCode::kInvalidArgument, "action tensor '{}' has {} bytes, expected {}",
                     spec.name(), bytes.size(), spec.byteSize());
  const std::byte* data = bytes.data();
  using protocol::ElementType;
  using protocol::loadElement;
  switch (spec.type()) {
  case ElementType::kFloat:
    return env::ActionValue(static_cast<double>(loadElement<float>(data, 0)));
  case ElementType::kDouble:
    return env::ActionValue(loadElement<double>(data, 0));
  case ElementType::kUInt64: {
    uint64_t value = loadElement<uint64_t>(data, 0);
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return makeError(ErrorCode::kInvalidArgument, "action {} does not fit in int64", value);
    return env::ActionValue(static_cast<int64_t>(value));
  }
  case ElementType::kInt8:
    return env::ActionValue(int64_t{loadElement<int8_t>(data, 0)});
  case ElementType::kUInt8:
    return env::ActionValue(int64_t{loadElement<uint8_t>(data, 0)});
  case ElementType::kInt16:
    return env::ActionValue(int64_t{loadElement<int16_t>(data, 0)});
  case ElementType::kUInt16:
    return env::ActionValue(int64_t{loadElement<uint16_t>(data, 0)});
  case ElementType::kInt32:
    return env::ActionValue(int64_t{loadElement<int32_t>(data, 0)});
  case ElementType::kUInt32:
    return env::ActionValue(int64_t{loadElement<uint32_t>(data, 0)});
  case ElementType::kInt64:
    return env::ActionValue(loadElement<int64_t>(data, 0));
  }
  return makeError(ErrorCode::kInternal, "unknown element type");
}

} // namespace mlgo::trace
