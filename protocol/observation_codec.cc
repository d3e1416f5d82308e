//===- protocol/observation_codec.cc - tensors as agent JSON --------------===//
#include "mlgo/protocol/observation_codec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace mlgo::protocol {
namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The two characters of every 12-bit value: three bytes become two
/// lookups (an observation is encoded on every step).
constexpr std::array<char, 8192> kBase64Pairs = [] {
  std::array<char, 8192> pairs{};
  for (size_t v = 0; v < 4096; ++v) {
    pairs[2 * v] = kBase64Alphabet[v >> 6];
    pairs[2 * v + 1] = kBase64Alphabet[v & 63];
  }
  return pairs;
}();

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

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

} // namespace

std::optional<TensorEncoding> parseTensorEncoding(std::string_view text) {
  if (text == "json")
    return TensorEncoding::kJson;
  if (text == "base64")
    return TensorEncoding::kBase64;
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

/// The object, given each feature's key (`keys[i]` or, when `keys` is
/// empty, made on the spot).
void appendObservation(std::string& out, const LogHeader& header,
                       std::span<const std::string> keys,
                       std::span<const std::span<const std::byte>> tensors,
                       TensorEncoding encoding, std::span<const bool> include) {
  const size_t n = std::min(header.features.size(), tensors.size());
  if (encoding == TensorEncoding::kBase64) { // One allocation for the whole object.
    size_t need = 2;
    for (size_t i = 0; i < n; ++i)
      need += header.features[i].name().size() + 6 + (tensors[i].size() + 2) / 3 * 4;
    out.reserve(out.size() + need);
  }
  out += '{';
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    if (!include.empty() && !include[i])
      continue;
    if (!first)
      out += ',';
    first = false;
    if (keys.empty())
      out += jsonKey(header.features[i].name());
    else
      out += keys[i];
    if (encoding == TensorEncoding::kBase64) {
      out += '"';
      appendBase64(out, tensors[i]);
      out += '"';
    } else {
      appendTensorJson(out, header.features[i], tensors[i]);
    }
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

void ObservationJsonWriter::append(std::string& out,
                                   std::span<const std::span<const std::byte>> tensors,
                                   TensorEncoding encoding) const {
  appendObservation(out, header_, keys_, tensors, encoding, {});
}

void appendBase64(std::string& out, std::span<const std::byte> bytes) {
  const size_t full = bytes.size() / 3 * 3;
  size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4);
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  // Six bytes (two groups) per 8-byte load while eight bytes are readable.
  for (; i + 8 <= bytes.size(); i += 6, dst += 8) {
    uint64_t w;
    std::memcpy(&w, src + i, 8);
    w = __builtin_bswap64(w); // The first byte on top, as base64 reads them.
    std::memcpy(dst, &kBase64Pairs[2 * ((w >> 52) & 4095)], 2);
    std::memcpy(dst + 2, &kBase64Pairs[2 * ((w >> 40) & 4095)], 2);
    std::memcpy(dst + 4, &kBase64Pairs[2 * ((w >> 28) & 4095)], 2);
    std::memcpy(dst + 6, &kBase64Pairs[2 * ((w >> 16) & 4095)], 2);
  }
  for (; i < full; i += 3, dst += 4) {
    uint32_t v = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    std::memcpy(dst, &kBase64Pairs[2 * (v >> 12)], 2);
    std::memcpy(dst + 2, &kBase64Pairs[2 * (v & 4095)], 2);
  }
  size_t rest = bytes.size() - full;
  if (rest) {
    uint32_t v = uint32_t{src[full]} << 16;
    if (rest == 2)
      v |= uint32_t{src[full + 1]} << 8;
    *dst++ = kBase64Alphabet[v >> 18];
    *dst++ = kBase64Alphabet[(v >> 12) & 63];
    *dst++ = rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    *dst++ = '=';
  }
}

Result<std::vector<std::byte>> decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return makeError(ErrorCode::kInvalidArgument, "base64: length {} is not a multiple of 4",
                     text.size());
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad || (v[k] = base64Value(c)) < 0)
        return makeError(ErrorCode::kInvalidArgument, "base64: invalid character at {}", i + k);
    }
    uint32_t word = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) |
                    uint32_t(v[3]);
    out.push_back(std::byte(word >> 16));
    if (pad < 2)
      out.push_back(std::byte((word >> 8) & 0xff));
    if (pad < 1)
      out.push_back(std::byte(word & 0xff));
  }
  return out;
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
