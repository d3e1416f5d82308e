//===- protocol/compact_step.cc - step lines without the JSON parser ------===//
#include "compact_step.h"

namespace mlgo::protocol::detail {
namespace {

/// Consumes `literal` at the front of `text`.
bool eat(std::string_view& text, std::string_view literal) {
  if (!text.starts_with(literal))
    return false;
  text.remove_prefix(literal.size());
  return true;
}

/// Consumes a non-negative JSON integer of at most 18 digits (no leading
/// zero): what the general parser reads as the same int64.
std::optional<std::string_view> eatInteger(std::string_view& text) {
  size_t n = 0;
  while (n < text.size() && n < 19 && text[n] >= '0' && text[n] <= '9')
    ++n;
  if (n == 0 || n > 18 || (n > 1 && text[0] == '0'))
    return std::nullopt;
  auto digits = text.substr(0, n);
  text.remove_prefix(n);
  return digits;
}

int64_t digitsValue(std::string_view digits) {
  int64_t value = 0;
  for (char c : digits)
    value = value * 10 + (c - '0');
  return value;
}

} // namespace

std::optional<rpc::Request> decodeCompactStep(std::string_view text) {
  if (!eat(text, R"({"jsonrpc":"2.0","id":)"))
    return std::nullopt;
  auto id = eatInteger(text);
  if (!id || !eat(text, R"(,"method":")"))
    return std::nullopt;
  size_t m = 0;
  while (m < text.size() && ((text[m] >= 'a' && text[m] <= 'z') || text[m] == '_'))
    ++m;
  std::string_view method = text.substr(0, m);
  text.remove_prefix(m);
  if (method.empty() || !eat(text, R"(","params":{"episode":)"))
    return std::nullopt;
  auto episode = eatInteger(text);
  if (!episode || !eat(text, R"(,"action":)"))
    return std::nullopt;
  auto action = eatInteger(text);
  if (!action || text != "}}")
    return std::nullopt;
  rpc::Request request;
  request.id = rpc::Id{std::string(*id)};
  request.method = std::string(method);
  if (request.method == "step") {
    request.compact = rpc::Request::CompactStep{digitsValue(*episode), digitsValue(*action)};
  } else {
    request.params.try_emplace("episode", digitsValue(*episode));
    request.params.try_emplace("action", digitsValue(*action));
  }
  return request;
}

} // namespace mlgo::protocol::detail
