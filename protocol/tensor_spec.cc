//===- protocol/tensor_spec.cc - tensor name, type and shape --------------===//
#include "mlgo/protocol/tensor_spec.h"

#include "json_util.h"

#include <llvm/Support/raw_ostream.h>

#include <array>
#include <charconv>
#include <cmath>

namespace mlgo::protocol {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view spelling;
  size_t size;
};

// In LLVM's order (SUPPORTED_TENSOR_TYPES).
constexpr std::array<TypeInfo, 10> kTypes = {{
    {ElementType::kFloat, "float", 4},
    {ElementType::kDouble, "double", 8},
    {ElementType::kInt8, "int8_t", 1},
    {ElementType::kUInt8, "uint8_t", 1},
    {ElementType::kInt16, "int16_t", 2},
    {ElementType::kUInt16, "uint16_t", 2},
    {ElementType::kInt32, "int32_t", 4},
    {ElementType::kUInt32, "uint32_t", 4},
    {ElementType::kInt64, "int64_t", 8},
    {ElementType::kUInt64, "uint64_t", 8},
}};

const TypeInfo& info(ElementType type) { return kTypes[static_cast<size_t>(type)]; }

std::string knownSpellings() {
  std::string all;
  for (const auto& t : kTypes) {
    if (!all.empty())
      all += ", ";
    all += t.spelling;
  }
  return all;
}

} // namespace

std::string_view spelling(ElementType type) { return info(type).spelling; }

std::optional<ElementType> parseElementType(std::string_view text) {
  for (const auto& t : kTypes)
    if (t.spelling == text)
      return t.type;
  return std::nullopt;
}

size_t elementSize(ElementType type) { return info(type).size; }

bool isFloatingPoint(ElementType type) {
  return type == ElementType::kFloat || type == ElementType::kDouble;
}

bool isSigned(ElementType type) {
  switch (type) {
  case ElementType::kInt8:
  case ElementType::kInt16:
  case ElementType::kInt32:
  case ElementType::kInt64:
    return true;
  default:
    return false;
  }
}

Result<TensorSpec> TensorSpec::create(std::string name, ElementType type,
                                      std::vector<int64_t> shape, int port) {
  uint64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return makeError(ErrorCode::kInvalidArgument,
                       "tensor '{}': dimension {} is negative ({})", name, i, shape[i]);
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(shape[i]), &count))
      return makeError(ErrorCode::kInvalidArgument,
                       "tensor '{}': element count overflows 64 bits", name);
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elementSize(type)), &bytes))
    return makeError(ErrorCode::kInvalidArgument, "tensor '{}': byte size overflows 64 bits",
                     name);
  TensorSpec spec;
  spec.name_ = std::move(name);
  spec.type_ = type;
  spec.port_ = port;
  spec.shape_ = std::move(shape);
  spec.elementCount_ = count;
  spec.byteSize_ = bytes;
  return spec;
}

Result<TensorSpec> TensorSpec::fromJson(std::string_view json) {
  auto parsed = llvm::json::parse(llvm::StringRef(json.data(), json.size()));
  if (!parsed)
    return makeError(ErrorCode::kParse, "tensor spec: invalid JSON: {}",
                     detail::takeMessage(parsed.takeError()));
  return detail::specFromJson(*parsed, "tensor spec");
}

std::string TensorSpec::toJson() const {
  std::string out;
  appendJson(out);
  return out;
}

void TensorSpec::appendJson(std::string& out) const {
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  detail::writeSpec(json, *this);
}


namespace {
template <typename T> void widen(const std::byte* data, std::span<double> out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<double>(loadElement<T>(data, i));
}
} // namespace

void elementsAsDouble(ElementType type, const std::byte* data, std::span<double> out) {
  switch (type) {
  case ElementType::kFloat: return widen<float>(data, out);
  case ElementType::kDouble: return widen<double>(data, out);
  case ElementType::kInt8: return widen<int8_t>(data, out);
  case ElementType::kUInt8: return widen<uint8_t>(data, out);
  case ElementType::kInt16: return widen<int16_t>(data, out);
  case ElementType::kUInt16: return widen<uint16_t>(data, out);
  case ElementType::kInt32: return widen<int32_t>(data, out);
  case ElementType::kUInt32: return widen<uint32_t>(data, out);
  case ElementType::kInt64: return widen<int64_t>(data, out);
  case ElementType::kUInt64: return widen<uint64_t>(data, out);
  }
}

double elementAsDouble(ElementType type, const std::byte* data, size_t index) {
  double value = 0;
  elementsAsDouble(type, data + index * elementSize(type), std::span(&value, 1));
  return value;
}

namespace {
template <typename T> void appendNumber(std::string& out, T value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec; // 64 bytes hold any shortest round-trip form of these types.
  out.append(buf, end);
}

template <typename T> void appendFloating(std::string& out, T value) {
  if (std::isnan(value))
    out += "nan";
  else if (std::isinf(value))
    out += value > 0 ? "inf" : "-inf";
  else
    appendNumber(out, value);
}
} // namespace

void appendElementText(std::string& out, ElementType type, const std::byte* data, size_t index) {
  switch (type) {
  case ElementType::kFloat:
    return appendFloating(out, loadElement<float>(data, index));
  case ElementType::kDouble:
    return appendFloating(out, loadElement<double>(data, index));
  case ElementType::kInt8:
    return appendNumber(out, static_cast<int>(loadElement<int8_t>(data, index)));
  case ElementType::kUInt8:
    return appendNumber(out, static_cast<unsigned>(loadElement<uint8_t>(data, index)));
  case ElementType::kInt16:
    return appendNumber(out, loadElement<int16_t>(data, index));
  case ElementType::kUInt16:
    return appendNumber(out, loadElement<uint16_t>(data, index));
  case ElementType::kInt32:
    return appendNumber(out, loadElement<int32_t>(data, index));
  case ElementType::kUInt32:
    return appendNumber(out, loadElement<uint32_t>(data, index));
  case ElementType::kInt64:
    return appendNumber(out, loadElement<int64_t>(data, index));
  case ElementType::kUInt64:
    return appendNumber(out, loadElement<uint64_t>(data, index));
  }
}

namespace detail {

std::string takeMessage(llvm::Error error) { return llvm::toString(std::move(error)); }

Result<TensorSpec> specFromJson(const llvm::json::Value& value, std::string_view where) {
  const auto* object = value.getAsObject();
  if (!object)
    return makeError(ErrorCode::kParse, "{}: expected a JSON object", where);
  auto name = object->getString("name");
  if (!name)
    return makeError(ErrorCode::kParse, "{}: missing string field 'name'", where);
  auto typeText = object->getString("type");
  if (!typeText)
    return makeError(ErrorCode::kParse, "{} '{}': missing string field 'type'", where,
                     name->str());
  auto type = parseElementType(std::string_view(typeText->data(), typeText->size()));
  if (!type)
    return makeError(ErrorCode::kParse, "{} '{}': unknown element type '{}' (expected one of {})",
                     where, name->str(), typeText->str(), knownSpellings());
  int64_t port = 0;
  if (const auto* portValue = object->get("port")) {
    auto asInt = portValue->getAsInteger();
    if (!asInt || *asInt < 0 || *asInt > INT32_MAX)
      return makeError(ErrorCode::kParse, "{} '{}': 'port' must be a small non-negative integer",
                       where, name->str());
    port = *asInt;
  }
  const auto* shapeArray = object->getArray("shape");
  if (!shapeArray)
    return makeError(ErrorCode::kParse, "{} '{}': missing array field 'shape'", where,
                     name->str());
  std::vector<int64_t> shape;
  shape.reserve(shapeArray->size());
  for (const auto& dim : *shapeArray) {
    auto asInt = dim.getAsInteger();
    if (!asInt)
      return makeError(ErrorCode::kParse, "{} '{}': shape entries must be integers", where,
                       name->str());
    shape.push_back(*asInt);
  }
  auto spec = TensorSpec::create(name->str(), *type, std::move(shape), static_cast<int>(port));
  if (!spec)
    return Error(ErrorCode::kParse, std::string(where) + ": " + spec.error().message());
  return spec;
}

void writeSpec(llvm::json::OStream& out, const TensorSpec& spec) {
  out.object([&] {
    out.attribute("name", spec.name());
    out.attribute("type", llvm::StringRef(spelling(spec.type()).data(), spelling(spec.type()).size()));
    out.attribute("port", static_cast<int64_t>(spec.port()));
    out.attributeArray("shape", [&] {
      for (int64_t dim : spec.shape())
        out.value(dim);
    });
  });
}

} // namespace detail
} // namespace mlgo::protocol
