//===- protocol/rpc.cc - the agent protocol's JSON-RPC codec --------------===//
#include "mlgo/protocol/rpc.h"

#include "compact_step.h"

#include "json_util.h"

#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace mlgo::protocol::rpc {
namespace {

// --- Raw scanning of a line llvm::json::parse accepted (or is about to) ---

size_t skipSpace(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
    ++i;
  return i;
}

/// `t[i]` is '"'; returns the index after the closing quote.
size_t skipString(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\')
      ++i;
    else if (t[i] == '"')
      return i + 1;
  }
  return t.size();
}

/// Skips the value starting at `t[i]`; iterative, whatever the nesting.
size_t skipValue(std::string_view t, size_t i) {
  if (i >= t.size())
    return i;
  if (t[i] == '"')
    return skipString(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && std::string_view(",]} \t\r\n").find(t[i]) == std::string_view::npos)
      ++i;
    return i;
  }
  size_t depth = 0;
  while (i < t.size()) {
    char c = t[i];
    if (c == '"') {
      i = skipString(t, i);
      continue;
    }
    if (c == '{' || c == '[')
      ++depth;
    else if ((c == '}' || c == ']') && --depth == 0)
      return i + 1;
    ++i;
  }
  return i;
}

/// True when arrays/objects nest deeper than `limit` anywhere in `t`.
bool nestsDeeperThan(std::string_view t, size_t limit) {
  size_t depth = 0;
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (c == '"') {
      i = skipString(t, i);
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > limit)
        return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
    ++i;
  }
  return false;
}

bool keyIsId(std::string_view quoted) {
  if (quoted == "\"id\"")
    return true;
  if (quoted.find('\\') == std::string_view::npos)
    return false;
  auto decoded = llvm::json::parse(llvm::StringRef(quoted.data(), quoted.size()));
  if (!decoded) {
    llvm::consumeError(decoded.takeError());
    return false;
  }
  auto text = decoded->getAsString();
  return text && *text == "id";
}

/// The raw text of the "id" member of the object starting at `t[i]`.
std::optional<std::string_view> rawIdAt(std::string_view t, size_t i) {
  if (i >= t.size() || t[i] != '{')
    return std::nullopt;
  for (i = skipSpace(t, i + 1); i < t.size() && t[i] == '"';) {
    size_t keyStart = i;
    i = skipString(t, i);
    std::string_view key = t.substr(keyStart, i - keyStart);
    i = skipSpace(t, i);
    if (i >= t.size() || t[i] != ':')
      return std::nullopt;
    i = skipSpace(t, i + 1);
    size_t valueStart = i;
    i = skipValue(t, i);
    if (keyIsId(key))
      return t.substr(valueStart, i - valueStart);
    i = skipSpace(t, i);
    if (i < t.size() && t[i] == ',')
      i = skipSpace(t, i + 1);
  }
  return std::nullopt;
}

/// For each element of the top-level array in `t`, the raw text of its
/// "id" member (nullopt for elements without one or not objects).
std::vector<std::optional<std::string_view>> rawBatchIds(std::string_view t) {
  std::vector<std::optional<std::string_view>> ids;
  size_t i = skipSpace(t, 0);
  if (i >= t.size() || t[i] != '[')
    return ids;
  for (i = skipSpace(t, i + 1); i < t.size() && t[i] != ']';) {
    ids.push_back(rawIdAt(t, i));
    i = skipSpace(t, skipValue(t, i));
    if (i < t.size() && t[i] == ',')
      i = skipSpace(t, i + 1);
  }
  return ids;
}

Item decodeItem(llvm::json::Value value, std::optional<std::string_view> rawId) {
  auto* object = value.getAsObject();
  if (!object)
    return BadRequest{{}, Code::kInvalidRequest, "a request must be a JSON object"};
  std::optional<Id> id;
  if (auto* idValue = object->get("id")) {
    if (idValue->kind() != llvm::json::Value::Number &&
        idValue->kind() != llvm::json::Value::String && idValue->kind() != llvm::json::Value::Null)
      return BadRequest{{}, Code::kInvalidRequest, "'id' must be a number, string or null"};
    id = rawId ? Id{std::string(*rawId)} : Id::of(*idValue);
  }
  Id replyId = id ? *id : Id{};
  auto version = object->getString("jsonrpc");
  if (!version || *version != "2.0")
    return BadRequest{replyId, Code::kInvalidRequest, "'jsonrpc' must be \"2.0\""};
  auto method = object->getString("method");
  if (!method)
    return BadRequest{replyId, Code::kInvalidRequest, "'method' must be a string"};
  Request request;
  request.id = std::move(id);
  request.method = method->str();
  if (auto* params = object->get("params")) {
    if (auto* paramsObject = params->getAsObject())
      request.params = std::move(*paramsObject);
    else if (params->kind() != llvm::json::Value::Null)
      return BadRequest{replyId, Code::kInvalidParams, "'params' must be an object"};
  }
  return request;
}

/// JSON cannot spell infinities or NaN (llvm::json would print `inf`), so a
/// value about to be written has them replaced by null. Iterative: the
/// value may nest as deep as whatever built it.
void nullNonFinite(llvm::json::Value& root) {
  std::vector<llvm::json::Value*> pending{&root};
  while (!pending.empty()) {
    llvm::json::Value* value = pending.back();
    pending.pop_back();
    if (auto* object = value->getAsObject()) {
      for (auto& member : *object)
        pending.push_back(&member.second);
    } else if (auto* array = value->getAsArray()) {
      for (auto& element : *array)
        pending.push_back(&element);
    } else if (value->kind() == llvm::json::Value::Number &&
               !std::isfinite(*value->getAsNumber())) {
      *value = nullptr;
    }
  }
}

std::string write(const std::function<void(llvm::json::OStream&)>& body) {
  std::string out;
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  body(json);
  return out;
}

} // namespace

std::string_view codeName(Code code) {
  switch (code) {
  case Code::kParseError: return "parse_error";
  case Code::kInvalidRequest: return "invalid_request";
  case Code::kMethodNotFound: return "method_not_found";
  case Code::kInvalidParams: return "invalid_params";
  case Code::kInternalError: return "internal_error";
  case Code::kInvalidAction: return "invalid_action";
  case Code::kUnknownEpisode: return "unknown_episode";
  case Code::kEpisodeFailed: return "episode_failed";
  case Code::kBusy: return "busy";
  case Code::kLineTooLong: return "line_too_long";
  }
  return "unknown";
}

Id Id::of(const llvm::json::Value& value) {
  llvm::json::Value copy = value;
  nullNonFinite(copy);
  return Id{write([&](llvm::json::OStream& json) { json.value(copy); })};
}

Line decodeLine(std::string_view text, size_t maxBatch, size_t maxDepth) {
  Line line;
  if (auto fast = detail::decodeCompactStep(text)) {
    line.items.push_back(std::move(*fast));
    return line;
  }
  if (nestsDeeperThan(text, maxDepth)) {
    line.items.push_back(BadRequest{
        {}, Code::kParseError,
        fmt::format("JSON nested deeper than {} levels; refused unparsed", maxDepth)});
    return line;
  }
  auto parsed = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!parsed) {
    line.items.push_back(BadRequest{{}, Code::kParseError,
                                    "invalid JSON: " + detail::takeMessage(parsed.takeError())});
    return line;
  }
  auto* array = parsed->getAsArray();
  if (!array) {
    line.items.push_back(decodeItem(std::move(*parsed), rawIdAt(text, skipSpace(text, 0))));
    return line;
  }
  if (array->empty()) {
    line.items.push_back(BadRequest{{}, Code::kInvalidRequest, "empty batch"});
    return line;
  }
  if (array->size() > maxBatch) {
    line.items.push_back(BadRequest{
        {}, Code::kInvalidRequest,
        fmt::format("batch of {} requests exceeds the limit of {}", array->size(), maxBatch)});
    return line;
  }
  line.batch = true;
  line.items.reserve(array->size());
  auto rawIds = rawBatchIds(text);
  for (size_t i = 0; i < array->size(); ++i)
    line.items.push_back(decodeItem(std::move((*array)[i]),
                                    i < rawIds.size() ? rawIds[i] : std::nullopt));
  return line;
}

std::string encodeResult(const Id& id, llvm::json::Value result) {
  nullNonFinite(result);
  return write([&](llvm::json::OStream& json) {
    json.object([&] {
      json.attribute("jsonrpc", "2.0");
      json.attributeBegin("id");
      json.rawValue(id.json);
      json.attributeEnd();
      json.attribute("result", result);
    });
  });
}

llvm::json::Object Request::paramsObject() const {
  if (!compact)
    return llvm::json::Object(params);
  return llvm::json::Object{{"episode", compact->episode}, {"action", compact->action}};
}

void appendResultPrefix(std::string& out, const Id& id) {
  out += "{\"jsonrpc\":\"2.0\",\"id\":";
  out += id.json;
  out += ",\"result\":";
}

std::string encodeRawResult(const Id& id, std::string_view resultJson) {
  std::string out;
  appendResultPrefix(out, id);
  out += resultJson;
  out += '}';
  return out;
}

std::string encodeError(const Id& id, Code code, std::string_view message,
                        std::optional<llvm::json::Value> data) {
  if (data)
    nullNonFinite(*data);
  return write([&](llvm::json::OStream& json) {
    json.object([&] {
      json.attribute("jsonrpc", "2.0");
      json.attributeBegin("id");
      json.rawValue(id.json);
      json.attributeEnd();
      json.attributeObject("error", [&] {
        json.attribute("code", static_cast<int64_t>(code));
        json.attribute("message", llvm::StringRef(message.data(), message.size()));
        if (data)
          json.attribute("data", *data);
      });
    });
  });
}

std::string joinBatch(const std::vector<std::string>& responses) {
  std::string out = "[";
  for (size_t i = 0; i < responses.size(); ++i) {
    if (i)
      out += ',';
    out += responses[i];
  }
  out += ']';
  return out;
}

Result<int64_t> requireInt(const llvm::json::Object& params, std::string_view key) {
  auto value = optionalInt(params, key);
  if (!value)
    return std::move(value).error();
  if (!*value)
    return makeError(ErrorCode::kInvalidArgument, "missing integer parameter '{}'", key);
  return **value;
}

Result<std::optional<int64_t>> optionalInt(const llvm::json::Object& params,
                                           std::string_view key) {
  const auto* value = params.get(llvm::StringRef(key.data(), key.size()));
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::optional<int64_t>();
  if (auto asInt = value->getAsInteger())
    return std::optional<int64_t>(*asInt);
  return makeError(ErrorCode::kInvalidArgument, "parameter '{}' must be an integer", key);
}

Result<std::optional<std::string>> optionalString(const llvm::json::Object& params,
                                                  std::string_view key) {
  const auto* value = params.get(llvm::StringRef(key.data(), key.size()));
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::optional<std::string>();
  if (auto asString = value->getAsString())
    return std::optional<std::string>(asString->str());
  return makeError(ErrorCode::kInvalidArgument, "parameter '{}' must be a string", key);
}

Result<std::optional<bool>> optionalBool(const llvm::json::Object& params, std::string_view key) {
  const auto* value = params.get(llvm::StringRef(key.data(), key.size()));
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::optional<bool>();
  if (auto asBool = value->getAsBoolean())
    return std::optional<bool>(*asBool);
  return makeError(ErrorCode::kInvalidArgument, "parameter '{}' must be a boolean", key);
}

} // namespace mlgo::protocol::rpc
