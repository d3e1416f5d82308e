//===- policy/json_text.cc - JSON text as the policy layer writes it --------===//
#include "mlgo/policy/json_text.h"

#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

namespace mlgo::policy {
namespace json = llvm::json;
namespace {

constexpr size_t kLineWidth = 100;
constexpr size_t kShownWidth = 60;

std::string numberOf(const json::Value& value) {
  if (auto whole = value.getAsUINT64())
    return std::to_string(*whole);
  if (auto whole = value.getAsInteger(); whole && *whole != 0)
    return std::to_string(*whole);
  return numberText(value.getAsNumber().value_or(0));
}

/// The object's keys: those of `keyOrder` it has, in that order, then the rest sorted.
std::vector<std::string> keysOf(const json::Object& object,
                                std::span<const std::string_view> keyOrder) {
  std::vector<std::string> first, rest;
  for (std::string_view key : keyOrder)
    if (object.find(llvm::StringRef(key.data(), key.size())) != object.end())
      first.emplace_back(key);
  for (const auto& [key, item] : object)
    if (std::find(keyOrder.begin(), keyOrder.end(), std::string_view(key.str())) == keyOrder.end())
      rest.push_back(key.str());
  std::sort(rest.begin(), rest.end());
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

/// The children of an array or object as (prefix, value): `"key": ` for members.
std::vector<std::pair<std::string, const json::Value*>>
childrenOf(const json::Value& value, std::span<const std::string_view> keyOrder) {
  std::vector<std::pair<std::string, const json::Value*>> children;
  if (const json::Array* list = value.getAsArray()) {
    for (const json::Value& item : *list)
      children.emplace_back("", &item);
  } else if (const json::Object* object = value.getAsObject()) {
    for (const std::string& key : keysOf(*object, keyOrder))
      children.emplace_back(quotedText(key) + ": ", object->get(key));
  }
  return children;
}

} // namespace

std::string numberText(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0";
  if (std::fabs(value) < 0x1p63 && value == std::trunc(value))
    return std::to_string(static_cast<int64_t>(value));
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string quotedText(std::string_view text) {
  std::string out;
  llvm::raw_string_ostream stream(out);
  stream << json::Value(llvm::StringRef(text.data(), text.size())); // llvm's escaping
  return out;
}

std::string jsonText(const json::Value& value, bool indented, size_t depth,
                     std::span<const std::string_view> keyOrder) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return *value.getAsBoolean() ? "true" : "false";
  case json::Value::Number:
    return numberOf(value);
  case json::Value::String:
    return quotedText(*value.getAsString());
  case json::Value::Array:
  case json::Value::Object:
    break;
  }
  bool array = value.kind() == json::Value::Array;
  auto children = childrenOf(value, keyOrder);
  std::string compact;
  for (const auto& [prefix, child] : children)
    compact += (compact.empty() ? "" : ", ") + prefix + jsonText(*child, false, 0, keyOrder);
  compact = (array ? "[" : "{") + compact + (array ? "]" : "}");
  if (!indented || children.empty() || depth + compact.size() <= kLineWidth)
    return compact;
  std::string out = array ? "[" : "{";
  std::string inner(depth + 1, ' ');
  for (size_t i = 0; i < children.size(); ++i)
    out += (i ? ",\n" : "\n") + inner + children[i].first +
           jsonText(*children[i].second, true, depth + 1, keyOrder);
  return out + "\n" + std::string(depth, ' ') + (array ? "]" : "}");
}

std::string shownValue(const json::Value* value) {
  if (value == nullptr)
    return "null";
  std::string text = jsonText(*value);
  if (text.size() > kShownWidth) {
    size_t cut = kShownWidth - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut; // not inside a UTF-8 character
    text = text.substr(0, cut) + "...";
  }
  return text;
}

} // namespace mlgo::policy
