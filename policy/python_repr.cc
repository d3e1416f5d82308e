//===- policy/python_repr.cc - JSON values as Python shows them -------------===//
#include "python_repr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace mlgo::policy {

std::string pythonFloatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as d.ddde±x; Python lays them out itself.
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  std::string sign = text.front() == '-' ? "-" : "";
  text.remove_prefix(sign.size());
  size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  if (digits.size() > 1)
    digits.erase(1, 1); // the '.'
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  int point = exponent + 1; // digits before the decimal point
  if (point > -4 && point <= 16) {
    if (point <= 0)
      return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    if (static_cast<size_t>(point) >= digits.size())
      return sign + digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
           digits.substr(static_cast<size_t>(point));
  }
  std::string mantissa = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
  std::string power = std::to_string(std::abs(exponent));
  return sign + mantissa + (exponent < 0 ? "e-" : "e+") + (power.size() < 2 ? "0" : "") + power;
}

namespace {

std::string quoted(std::string_view text) {
  char quote = text.find('\'') != std::string_view::npos &&
                       text.find('"') == std::string_view::npos
                   ? '"'
                   : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == '\\' || c == quote)
      out += '\\';
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out + quote;
}

} // namespace

std::string pythonRepr(const llvm::json::Value* value) {
  if (value == nullptr || value->getAsNull())
    return "None";
  if (auto b = value->getAsBoolean())
    return *b ? "True" : "False";
  if (auto s = value->getAsString())
    return quoted(*s);
  if (auto n = value->getAsUINT64()) // written without a fraction or exponent
    return std::to_string(*n);
  if (auto number = value->getAsNumber()) {
    // Negative and whole: the parser no longer says whether it had a fraction.
    if (auto i = value->getAsInteger(); i && *number < 0)
      return std::to_string(*i);
    return pythonFloatRepr(*number);
  }
  std::string out;
  if (const llvm::json::Array* list = value->getAsArray()) {
    for (const llvm::json::Value& item : *list)
      out += (out.empty() ? "" : ", ") + pythonRepr(&item);
    return "[" + out + "]";
  }
  const llvm::json::Object* object = value->getAsObject();
  std::vector<std::string> keys;
  for (const auto& [key, item] : *object)
    keys.push_back(key.str());
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys)
    out += (out.empty() ? "" : ", ") + quoted(key) + ": " + pythonRepr(object->get(key));
  return "{" + out + "}";
}

} // namespace mlgo::policy
