//===- table/json_writing.cc - JSON text as Python's json.dumps writes it ---===//
#include "json_writing.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/ConvertUTF.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlgo::table {

namespace {

/// The characters json.dumps escapes by name, and their names.
constexpr std::string_view kNamed = "\"\\\n\r\t\b\f";
constexpr std::string_view kNames = "\"\\nrtbf";

} // namespace

bool appendQuoted(std::string& out, std::string_view text) {
  llvm::SmallVector<llvm::UTF16, 64> units;
  if (!llvm::convertUTF8ToUTF16String(llvm::StringRef(text.data(), text.size()), units))
    return false;
  out += '"';
  for (llvm::UTF16 unit : units) {
    size_t named = unit < 128 ? kNamed.find(static_cast<char>(unit)) : std::string_view::npos;
    if (named != std::string_view::npos) {
      out += '\\';
      out += kNames[named];
    } else if (unit >= ' ' && unit <= '~') {
      out += static_cast<char>(unit);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(unit));
      out += escaped;
    }
  }
  out += '"';
  return true;
}

std::string floatText(double value) {
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0.0";
  char buffer[64];
  auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(end - buffer)); // "-d.ddde+XX"
  std::string sign = text.front() == '-' ? "-" : "";
  text.remove_prefix(sign.size());
  size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  if (digits.size() > 1)
    digits.erase(1, 1); // the point
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  int point = exponent + 1; // digits before the decimal point
  int count = static_cast<int>(digits.size());
  if (point > 16 || point <= -4) {
    std::string mantissa = digits.substr(0, 1) + (count > 1 ? "." + digits.substr(1) : "");
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + mantissa + tail;
  }
  if (point <= 0)
    return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (point >= count)
    return sign + digits + std::string(static_cast<size_t>(point - count), '0') + ".0";
  return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
         digits.substr(static_cast<size_t>(point));
}

} // namespace mlgo::table
