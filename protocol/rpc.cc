//===- protocol/rpc.cc - the agent protocol's JSON-RPC codec --------------===//
#include "mlgo/protocol/rpc.h"

#include "json_util.h"

#include <llvm/Support/raw_ostream.h>

namespace mlgo::protocol::rpc {
namespace {

Item decodeItem(llvm::json::Value value) {
  auto* object = value.getAsObject();
  if (!object)
    return BadRequest{nullptr, Code::kInvalidRequest, "a request must be a JSON object"};
  std::optional<llvm::json::Value> id;
  if (auto* idValue = object->get("id")) {
    if (idValue->kind() != llvm::json::Value::Number &&
        idValue->kind() != llvm::json::Value::String && idValue->kind() != llvm::json::Value::Null)
      return BadRequest{nullptr, Code::kInvalidRequest, "'id' must be a number, string or null"};
    id = *idValue;
  }
  llvm::json::Value replyId = id ? *id : llvm::json::Value(nullptr);
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

Line decodeLine(std::string_view text, size_t maxBatch) {
  Line line;
  auto parsed = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!parsed) {
    line.items.push_back(BadRequest{nullptr, Code::kParseError,
                                    "invalid JSON: " + detail::takeMessage(parsed.takeError())});
    return line;
  }
  auto* array = parsed->getAsArray();
  if (!array) {
    line.items.push_back(decodeItem(std::move(*parsed)));
    return line;
  }
  if (array->empty()) {
    line.items.push_back(BadRequest{nullptr, Code::kInvalidRequest, "empty batch"});
    return line;
  }
  if (array->size() > maxBatch) {
    line.items.push_back(BadRequest{
        nullptr, Code::kInvalidRequest,
        fmt::format("batch of {} requests exceeds the limit of {}", array->size(), maxBatch)});
    return line;
  }
  line.batch = true;
  line.items.reserve(array->size());
  for (auto& element : *array)
    line.items.push_back(decodeItem(std::move(element)));
  return line;
}

std::string encodeResult(const llvm::json::Value& id, llvm::json::Value result) {
  return write([&](llvm::json::OStream& json) {
    json.object([&] {
      json.attribute("jsonrpc", "2.0");
      json.attribute("id", id);
      json.attribute("result", result);
    });
  });
}

std::string encodeRawResult(const llvm::json::Value& id, std::string_view resultJson) {
  std::string out = write([&](llvm::json::OStream& json) { json.value(id); });
  out.insert(0, "{\"jsonrpc\":\"2.0\",\"id\":");
  out += ",\"result\":";
  out += resultJson;
  out += '}';
  return out;
}

std::string encodeError(const llvm::json::Value& id, Code code, std::string_view message,
                        std::optional<llvm::json::Value> data) {
  return write([&](llvm::json::OStream& json) {
    json.object([&] {
      json.attribute("jsonrpc", "2.0");
      json.attribute("id", id);
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
