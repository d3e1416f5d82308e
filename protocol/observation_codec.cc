//===- protocol/observation_codec.cc - tensors as agent JSON --------------===//
#include "mlgo/protocol/observation_codec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace mlgo::protocol {
namespace {

template <typename T> void appendFloating(std::string& out, T value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else if (value == 0 && !std::signbit(value)) {
    out += '0';
  } else {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    (void)ec; // 32 bytes hold any shortest float/double form.
    out.append(buf, end);
  }
}

template <typename T> void appendInteger(std::string& out, T value) {
  if (value == 0) {
    out += '0';
    return;
  }
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec;
  out.append(buf, end);
}

template <typename T, typename F>
void appendElements(std::string& out, std::span<const std::byte> data, F&& appendOne) {
  const size_t count = data.size() / sizeof(T);
  for (size_t i = 0; i < count; ++i) {
    if (i)
      out += ',';
    appendOne(out, loadElement<T>(data.data(), i));
  }
}

} // namespace

std::optional<TensorEncoding> parseTensorEncoding(std::string_view text) {
  if (text == "json")
    return TensorEncoding::kJson;
  if (text == "base64")
    return TensorEncoding::kBase64;
  if (text == "binary")
    return TensorEncoding::kBinary;
  return std::nullopt;
}

void appendTensorJson(std::string& out, const TensorSpec& spec, std::span<const std::byte> data) {
  out += '[';
  auto ints = [](std::string& o, auto v) { appendInteger(o, v); };
  auto floats = [](std::string& o, auto v) { appendFloating(o, v); };
  switch (spec.type()) {
  case ElementType::kFloat: appendElements<float>(out, data, floats); break;
  case ElementType::kDouble: appendElements<double>(out, data, floats); break;
  case ElementType::kInt8: appendElements<int8_t>(out, data, [](std::string& o, int8_t v) { appendInteger(o, int{v}); }); break;
  case ElementType::kUInt8: appendElements<uint8_t>(out, data, [](std::string& o, uint8_t v) { appendInteger(o, unsigned{v}); }); break;
  case ElementType::kInt16: appendElements<int16_t>(out, data, ints); break;
  case ElementType::kUInt16: appendElements<uint16_t>(out, data, ints); break;
  case ElementType::kInt32: appendElements<int32_t>(out, data, ints); break;
  case ElementType::kUInt32: appendElements<uint32_t>(out, data, ints); break;
  case ElementType::kInt64: appendElements<int64_t>(out, data, ints); break;
  case ElementType::kUInt64: appendElements<uint64_t>(out, data, ints); break;
  }
  out += ']';
}

namespace {

/// `"name":` with anything JSON would reject escaped (clang's feature names
/// are identifiers; this is defence).
std::string jsonKey(std::string_view name) {
  std::string key = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\')
      key += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      key += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else
      key += c;
  }
  key += "\":";
  return key;
}

bool included(std::span<const bool> include, size_t i) {
  return include.empty() || include[i];
}

/// The length of the base64 object of the first `n` tensors (those included)
/// under `keys` (`"name":`, escaped).
size_t base64ObjectSize(std::span<const std::string> keys,
                        std::span<const std::span<const std::byte>> tensors,
                        std::span<const bool> include, size_t n) {
  size_t size = 2, members = 0; // The braces.
  for (size_t i = 0; i < n; ++i)
    if (included(include, i)) {
      size += keys[i].size() + 2 + (tensors[i].size() + 2) / 3 * 4;
      ++members;
    }
  return size + (members > 0 ? members - 1 : 0); // The commas.
}

/// Appends that object, sized once and written in place: an observation of
/// forty 8-byte tensors costs more to append piece by piece than to encode.
void appendBase64Object(std::string& out, std::span<const std::string> keys,
                        std::span<const std::span<const std::byte>> tensors,
                        std::span<const bool> include, size_t n) {
  size_t start = out.size();
  out.resize(start + base64ObjectSize(keys, tensors, include, n));
  char* at = out.data() + start;
  *at++ = '{';
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    if (!included(include, i))
      continue;
    if (!first)
      *at++ = ',';
    first = false;
    at = std::copy(keys[i].begin(), keys[i].end(), at);
    *at++ = '"';
    at = encodeBase64(tensors[i], at);
    *at++ = '"';
  }
  *at = '}';
}

/// The object, given each feature's key (`keys[i]` or, when `keys` is
/// empty, made on the spot).
void appendObservation(std::string& out, const LogHeader& header,
                       std::span<const std::string> keys,
                       std::span<const std::span<const std::byte>> tensors,
                       TensorEncoding encoding, std::span<const bool> include) {
  const size_t n = std::min(header.features.size(), tensors.size());
  if (encoding == TensorEncoding::kBinary) { // The bytes follow the reply line.
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i)
      if (included(include, i))
        bytes += tensors[i].size();
    out += "{\"";
    out += kFrameKey;
    out += "\":";
    out += std::to_string(bytes);
    out += '}';
    return;
  }
  std::vector<std::string> made;
  if (keys.empty()) {
    for (size_t i = 0; i < n; ++i)
      made.push_back(jsonKey(header.features[i].name()));
    keys = made;
  }
  if (encoding == TensorEncoding::kBase64)
    return appendBase64Object(out, keys, tensors, include, n);
  out += '{';
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    if (!included(include, i))
      continue;
    if (!first)
      out += ',';
    first = false;
    out += keys[i];
    appendTensorJson(out, header.features[i], tensors[i]);
  }
  out += '}';
}

} // namespace

void appendObservationJson(std::string& out, const LogHeader& header,
                           std::span<const std::span<const std::byte>> tensors,
                           TensorEncoding encoding, std::span<const bool> include) {
  appendObservation(out, header, {}, tensors, encoding, include);
}

ObservationJsonWriter::ObservationJsonWriter(LogHeader header) : header_(std::move(header)) {
  for (const TensorSpec& spec : header_.features)
    keys_.push_back(jsonKey(spec.name()));
}

size_t ObservationJsonWriter::base64Size(
    std::span<const std::span<const std::byte>> tensors) const {
  return base64ObjectSize(keys_, tensors, {}, std::min(keys_.size(), tensors.size()));
}

void ObservationJsonWriter::append(std::string& out,
                                   std::span<const std::span<const std::byte>> tensors,
                                   TensorEncoding encoding) const {
  appendObservation(out, header_, keys_, tensors, encoding, {});
}

Result<ActionValues> decodeAction(const llvm::json::Value& action) {
  ActionValues out;
  auto add = [&](const llvm::json::Value& v) -> Status {
    auto number = v.getAsNumber();
    if (!number)
      return makeError(ErrorCode::kInvalidArgument, "action must be a number or an array of "
                                                    "numbers");
    out.values.push_back(*number);
    if (auto integer = v.getAsInteger())
      out.integers.push_back(*integer);
    else
      out.allIntegral = false;
    return Status::success();
  };
  if (const auto* array = action.getAsArray()) {
    if (array->empty())
      return makeError(ErrorCode::kInvalidArgument, "action array is empty");
    for (const auto& v : *array)
      MLGO_TRY(add(v));
  } else {
    MLGO_TRY(add(action));
  }
  if (!out.allIntegral)
    out.integers.clear();
  return out;
}

} // namespace mlgo::protocol
