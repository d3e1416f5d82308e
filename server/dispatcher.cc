//===- server/dispatcher.cc - agent requests to environment calls ---------===//
#include "mlgo/server/dispatcher.h"

#include "dispatcher_params.h"

#include <llvm/Support/raw_ostream.h>

namespace mlgo::server {

using detail::codeFor;
using detail::encodingParam;
using protocol::TensorEncoding;
using protocol::rpc::Code;

namespace detail {

Code codeFor(const Error& error) {
  switch (error.code()) {
  case ErrorCode::kInvalidArgument:
  case ErrorCode::kNotFound: return Code::kInvalidParams;
  case ErrorCode::kBusy: return Code::kBusy;
  case ErrorCode::kInternal: return Code::kInternalError;
  default: return Code::kEpisodeFailed;
  }
}

Result<std::optional<TensorEncoding>> encodingParam(const llvm::json::Object& params) {
  auto text = protocol::rpc::optionalString(params, "encoding");
  if (!text)
    return std::move(text).error();
  if (!*text)
    return std::optional<TensorEncoding>();
  auto encoding = protocol::parseTensorEncoding(**text);
  if (!encoding)
    return makeError(ErrorCode::kInvalidArgument,
                     "parameter 'encoding' must be \"json\", \"base64\" or \"binary\", not "
                     "\"{}\"",
                     **text);
  return std::optional<TensorEncoding>(*encoding);
}

} // namespace detail

// --- ConnectionEpisodes ---------------------------------------------------

bool ConnectionEpisodes::reserve(size_t limit) {
  std::lock_guard lock(mutex_);
  if (open_.size() + reserved_ >= limit)
    return false;
  ++reserved_;
  return true;
}

void ConnectionEpisodes::unreserve() {
  std::lock_guard lock(mutex_);
  --reserved_;
}

void ConnectionEpisodes::add(env::EpisodeId id, TensorEncoding encoding) {
  std::lock_guard lock(mutex_);
  if (reserved_ > 0)
    --reserved_;
  open_[id] = Entry{encoding, Clock::now(), false};
}

std::optional<ConnectionEpisodes::Entry> ConnectionEpisodes::begin(env::EpisodeId id,
                                                                   std::string* failure) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(id);
  if (it == open_.end()) {
    if (auto f = failed_.find(id); f != failed_.end() && failure)
      *failure = f->second;
    return std::nullopt;
  }
  it->second.inCall = true;
  return it->second;
}

void ConnectionEpisodes::end(env::EpisodeId id, bool ended) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(id);
  if (it == open_.end())
    return;
  if (ended) {
    open_.erase(it);
    return;
  }
  it->second.inCall = false;
  it->second.lastActivity = Clock::now();
}

void ConnectionEpisodes::fail(env::EpisodeId id, std::string why) {
  std::lock_guard lock(mutex_);
  open_.erase(id);
  failed_[id] = std::move(why);
}

std::vector<env::EpisodeId> ConnectionEpisodes::idleSince(Clock::time_point cutoff) const {
  std::lock_guard lock(mutex_);
  std::vector<env::EpisodeId> ids;
  for (const auto& [id, entry] : open_)
    if (!entry.inCall && entry.lastActivity < cutoff)
      ids.push_back(id);
  return ids;
}

std::vector<env::EpisodeId> ConnectionEpisodes::all() const {
  std::lock_guard lock(mutex_);
  std::vector<env::EpisodeId> ids;
  for (const auto& [id, entry] : open_)
    ids.push_back(id);
  return ids;
}

size_t ConnectionEpisodes::size() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

// --- Dispatcher -----------------------------------------------------------

Dispatcher::Dispatcher(env::Environment& environment, DispatcherOptions options)
    : environment_(environment), options_(options) {
  const auto& d = environment_.describe();
  protocol::LogHeader visible;
  visible.features = d.observationSpecs;
  visible.advice = d.actionSpec;
  writer_ = protocol::ObservationJsonWriter(std::move(visible));
  llvm::raw_string_ostream stream(describeJson_);
  llvm::json::OStream json(stream);
  auto specJson = [&](const protocol::TensorSpec& spec) {
    json.rawValue([&](llvm::raw_ostream& os) { os << spec.toJson(); });
  };
  json.object([&] {
    json.attribute("protocol_version", kProtocolVersion);
    json.attribute("problem", d.problem);
    json.attribute("summary", d.summary);
    json.attributeArray("observation_spec", [&] {
      for (const auto& spec : d.observationSpecs)
        specJson(spec);
    });
    json.attributeBegin("action_spec");
    if (d.actionSpec)
      specJson(*d.actionSpec);
    else
      json.value(nullptr);
    json.attributeEnd();
    json.attribute("action_rule", d.actionRule);
    if (d.defaultActionSource.empty())
      json.attribute("default_action_source", nullptr);
    else
      json.attribute("default_action_source", d.defaultActionSource);
    json.attribute("reward", d.rewardDefinition);
    json.attributeObject("corpus", [&] {
      json.attribute("root", d.corpusRoot.string());
      json.attribute("modules", static_cast<int64_t>(d.corpusModules));
    });
    json.attributeObject("clang", [&] {
      json.attribute("path", d.clangPath.string());
      json.attribute("version", d.clangVersion);
    });
    json.attribute("jobs", static_cast<int64_t>(d.jobs));
    json.attributeBegin("ir2vec");
    if (d.ir2vecVocabulary.empty())
      json.value(nullptr);
    else
      json.object([&] {
        json.attribute("vocabulary", d.ir2vecVocabulary.string());
        json.attribute("dimension", static_cast<int64_t>(d.ir2vecDimension));
      });
    json.attributeEnd();
    json.attribute("agent_timeout_seconds",
                   std::chrono::duration<double>(options_.agentTimeout).count());
    json.attributeArray("encodings", [&] {
      json.value("json");
      json.value("base64");
      json.value("binary");
    });
  });
}

bool Dispatcher::isBlocking(std::string_view method) {
  return method == "reset" || method == "step" || method == "close";
}

std::optional<std::string> Dispatcher::handle(const protocol::rpc::Request& request,
                                              ConnectionEpisodes& episodes) {
  // A reset or step sent as a notification could never deliver its result:
  // the episode it opened or advanced would be unreachable. Refused before
  // anything happens, with an error (id null) so the agent learns why.
  if (!request.id && (request.method == "reset" || request.method == "step"))
    return protocol::rpc::encodeError(
        protocol::rpc::Id{}, Code::kInvalidRequest,
        fmt::format("'{}' sent as a notification (no \"id\"): its result could not be "
                    "delivered, so nothing was done; send it with an id",
                    request.method));
  Reply reply;
  if (request.method == "describe")
    reply = describe();
  else if (request.method == "reset")
    reply = reset(request.params, episodes);
  else if (request.method == "step")
    reply = step(request, episodes);
  else if (request.method == "close")
    reply = close(request.params, episodes);
  else
    reply = failure(Code::kMethodNotFound,
                    fmt::format("unknown method '{}' (expected describe, reset, step or close)",
                                request.method));
  if (!request.id)
    return std::nullopt;
  return encode(*request.id, reply);
}

Dispatcher::Reply Dispatcher::describe() { return {describeJson_, std::nullopt, {}, {}}; }

std::optional<Dispatcher::Reply> Dispatcher::prefixParam(const llvm::json::Object& options,
                                                         std::vector<env::ActionValue>& out) {
  const auto* value = options.get("actions");
  if (!value || value->kind() == llvm::json::Value::Null)
    return std::nullopt;
  const auto* array = value->getAsArray();
  if (!array)
    return failure(Code::kInvalidParams, "options: 'actions' must be an array of actions");
  out.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    auto decoded = protocol::decodeAction((*array)[i]);
    if (!decoded || decoded->values.size() != 1)
      return failure(Code::kInvalidAction,
                     fmt::format("options: actions[{}]: {}", i,
                                 decoded ? fmt::format("has {} values; this problem takes one",
                                                       decoded->values.size())
                                         : decoded.error().message()));
    out.push_back(decoded->allIntegral ? env::ActionValue(decoded->integers[0])
                                       : env::ActionValue(decoded->values[0]));
  }
  return std::nullopt;
}

Dispatcher::Reply Dispatcher::reset(const llvm::json::Object& params,
                                    ConnectionEpisodes& episodes) {
  env::ResetRequest request;
  auto module = protocol::rpc::optionalString(params, "module");
  auto seed = protocol::rpc::optionalInt(params, "seed");
  auto encoding = encodingParam(params);
  if (!module || !seed || !encoding)
    return failure(Code::kInvalidParams,
                   (!module ? module.error() : !seed ? seed.error() : encoding.error()).message());
  if (*seed && **seed < 0)
    return failure(Code::kInvalidParams, "parameter 'seed' must be non-negative");
  request.module = module->value_or("");
  if (*seed)
    request.seed = static_cast<uint64_t>(**seed);
  TensorEncoding chosen = encoding->value_or(TensorEncoding::kJson);
  if (const auto* options = params.get("options"); options && options->kind() != llvm::json::Value::Null) {
    const auto* object = options->getAsObject();
    if (!object)
      return failure(Code::kInvalidParams, "parameter 'options' must be an object");
    auto maxSteps = protocol::rpc::optionalInt(*object, "max_steps");
    auto optEncoding = encodingParam(*object);
    if (!maxSteps || !optEncoding)
      return failure(Code::kInvalidParams,
                     "options: " + (!maxSteps ? maxSteps.error() : optEncoding.error()).message());
    if (*maxSteps) {
      if (**maxSteps < 0)
        return failure(Code::kInvalidParams, "options: 'max_steps' must be non-negative");
      request.options.maxSteps = static_cast<uint64_t>(**maxSteps);
    }
    if (*optEncoding)
      chosen = **optEncoding;
    if (auto refused = prefixParam(*object, request.options.actions))
      return std::move(*refused);
  }
  if (!episodes.reserve(options_.maxEpisodesPerConnection))
    return failure(Code::kBusy,
                   fmt::format("this connection holds {} open episodes, the limit per connection "
                               "(--max-episodes-per-connection); close some first",
                               options_.maxEpisodesPerConnection));
  auto result = environment_.reset(request);
  bool ended = !result || result->step.terminated || result->step.truncated;
  if (ended)
    episodes.unreserve();
  else
    episodes.add(result->episode, chosen); // Takes the reserved place.
  if (!result) {
    // With a prefix, kInvalidArgument is one of its actions breaking the rule.
    bool badPrefix = !request.options.actions.empty() &&
                     result.error().code() == ErrorCode::kInvalidArgument;
    return failure(badPrefix ? Code::kInvalidAction : codeFor(result.error()),
                   result.error().message());
  }
  Reply reply{stepJson(result->step, chosen, &*result), std::nullopt, {}, {}};
  appendFrame(reply.afterLine, result->step, chosen);
  return reply;
}

std::string Dispatcher::encode(const protocol::rpc::Id& id, const Reply& reply) {
  if (reply.code)
    return protocol::rpc::encodeError(id, *reply.code, reply.message);
  return protocol::rpc::encodeRawResult(id, reply.json) + reply.afterLine;
}

Dispatcher::Reply Dispatcher::close(const llvm::json::Object& params,
                                    ConnectionEpisodes& episodes) {
  auto id = protocol::rpc::requireInt(params, "episode");
  if (!id)
    return failure(Code::kInvalidParams, id.error().message());
  auto episode = static_cast<env::EpisodeId>(*id);
  if (!episodes.begin(episode, nullptr))
    return failure(Code::kUnknownEpisode,
                   fmt::format("unknown episode {} (never started here, or already ended)", *id));
  auto status = environment_.close(episode);
  episodes.end(episode, true);
  if (!status.ok() && status.error().code() != ErrorCode::kNotFound)
    return failure(codeFor(status.error()), status.error().message());
  return {fmt::format("{{\"episode\":{},\"closed\":true}}", episode), std::nullopt, {}, {}};
}

size_t Dispatcher::expireIdle(ConnectionEpisodes& episodes) {
  auto cutoff = ConnectionEpisodes::Clock::now() - options_.agentTimeout;
  auto idle = episodes.idleSince(cutoff);
  for (auto id : idle) {
    // Failed first: a step arriving meanwhile learns why, not "unknown".
    episodes.fail(id, fmt::format("the agent did not answer within {:.3g} s; the episode was "
                                  "truncated and its compiler killed",
                                  std::chrono::duration<double>(options_.agentTimeout).count()));
    (void)environment_.close(id);
  }
  return idle.size();
}

void Dispatcher::closeAll(ConnectionEpisodes& episodes) {
  for (auto id : episodes.all()) {
    (void)environment_.close(id);
    episodes.end(id, true);
  }
}

} // namespace mlgo::server
