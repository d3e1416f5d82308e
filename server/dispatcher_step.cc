//===- server/dispatcher_step.cc - a step request, begun, polled, answered ===//
//
// The step path of the Dispatcher: a step's params read (either request form),
// the environment's non-blocking step driven by the connection (beginStep,
// pollStep, completeStep), and the reply written in place, binary frames
// included. Resets, closes and the rest stay in dispatcher.cc.
//
//===----------------------------------------------------------------------===//
#include "mlgo/server/dispatcher.h"

#include "dispatcher_params.h"
#include "step_reply.h"

namespace mlgo::server {

using detail::encodingParam;
using protocol::TensorEncoding;
using protocol::rpc::Code;

std::optional<Dispatcher::Reply> Dispatcher::openStep(const protocol::rpc::Request& request,
                                                     ConnectionEpisodes& episodes,
                                                     PendingStep& call) {
  int64_t id = 0;
  const llvm::json::Value* actionJson = nullptr;
  std::optional<TensorEncoding> encoding;
  if (request.compact) {
    id = request.compact->episode;
  } else {
    auto given = protocol::rpc::requireInt(request.params, "episode");
    if (!given)
      return failure(Code::kInvalidParams, given.error().message());
    id = *given;
    actionJson = request.params.get("action");
    if (!actionJson)
      return failure(Code::kInvalidParams, "missing parameter 'action'");
    auto named = encodingParam(request.params);
    if (!named)
      return failure(Code::kInvalidParams, named.error().message());
    encoding = *named;
  }
  call.episode = static_cast<env::EpisodeId>(id);
  std::string failed;
  auto entry = episodes.begin(call.episode, &failed);
  if (!entry) {
    if (!failed.empty())
      return failure(Code::kEpisodeFailed, fmt::format("episode {}: {}", id, failed));
    return failure(Code::kUnknownEpisode,
                   fmt::format("unknown episode {} (never started here, or already ended)", id));
  }
  call.encoding = encoding.value_or(entry->encoding);
  if (request.compact) {
    call.action = env::ActionValue(request.compact->action);
    return std::nullopt;
  }
  auto decoded = protocol::decodeAction(*actionJson);
  if (!decoded || decoded->values.size() != 1) {
    episodes.end(call.episode, false);
    return failure(Code::kInvalidAction,
                   decoded ? fmt::format("action has {} values; this problem takes one",
                                         decoded->values.size())
                           : decoded.error().message());
  }
  call.action = decoded->allIntegral ? env::ActionValue(decoded->integers[0])
                                     : env::ActionValue(decoded->values[0]);
  return std::nullopt;
}

Dispatcher::Reply Dispatcher::closeStep(PendingStep& call, const Status& status,
                                        ConnectionEpisodes& episodes) {
  if (!status.ok()) {
    const auto& error = status.error();
    if (error.code() == ErrorCode::kInvalidArgument) {
      episodes.end(call.episode, false);
      return failure(Code::kInvalidAction, error.message());
    }
    if (error.code() == ErrorCode::kNotFound) {
      episodes.end(call.episode, true);
      return failure(Code::kUnknownEpisode, error.message());
    }
    if (error.code() == ErrorCode::kBusy) { // Another step of it in flight.
      episodes.end(call.episode, false);
      return failure(Code::kBusy, error.message());
    }
    // The environment ended the episode already; closing again (kNotFound)
    // makes sure nothing of a failed episode is ever held.
    (void)environment_.close(call.episode);
    episodes.fail(call.episode, error.message());
    return failure(error.code() == ErrorCode::kInternal ? Code::kInternalError
                                                        : Code::kEpisodeFailed,
                   error.message());
  }
  bool ended = call.result.terminated || call.result.truncated;
  episodes.end(call.episode, ended);
  Reply reply{stepJson(call.result, call.encoding, nullptr), std::nullopt, {}, {}};
  appendFrame(reply.afterLine, call.result, call.encoding);
  return reply;
}

void Dispatcher::appendFrame(std::string& out, const env::StepResult& step,
                             TensorEncoding encoding) const {
  if (encoding != TensorEncoding::kBinary || step.terminated || step.truncated)
    return;
  out += '\n';
  appendObservationFrame(out, step, environment_.describe());
}

std::string Dispatcher::closeStepReply(PendingStep& call, const Status& status,
                                       ConnectionEpisodes& episodes) {
  if (!status.ok())
    return encode(call.id, closeStep(call, status, episodes));
  episodes.end(call.episode, call.result.terminated || call.result.truncated);
  std::string out;
  protocol::rpc::appendResultPrefix(out, call.id);
  appendStepJson(out, call.result, call.encoding, nullptr);
  out += '}';
  appendFrame(out, call.result, call.encoding);
  return out;
}

Dispatcher::Reply Dispatcher::step(const protocol::rpc::Request& request,
                                   ConnectionEpisodes& episodes) {
  PendingStep call;
  if (auto refused = openStep(request, episodes, call))
    return std::move(*refused);
  Status status = environment_.step(call.episode, call.action, call.result);
  return closeStep(call, status, episodes);
}

Dispatcher::StepTurn Dispatcher::afterProgress(PendingStep& call,
                                               const Result<env::StepProgress>& progress,
                                               ConnectionEpisodes& episodes, std::string& reply) {
  if (progress.ok() && *progress == env::StepProgress::kWaiting)
    return StepTurn::kWaiting;
  if (progress.ok() && *progress == env::StepProgress::kMustBlock)
    return StepTurn::kBlocking;
  reply = closeStepReply(call, progress.ok() ? Status::success() : Status(progress.error()),
                         episodes);
  return StepTurn::kReplied;
}

Dispatcher::StepTurn Dispatcher::beginStep(const protocol::rpc::Request& request,
                                           ConnectionEpisodes& episodes, PendingStep& call,
                                           std::string& reply) {
  call.id = request.id.value_or(protocol::rpc::Id{});
  if (auto refused = openStep(request, episodes, call)) {
    reply = encode(call.id, *refused);
    return StepTurn::kReplied;
  }
  auto progress = environment_.beginStep(call.episode, call.action, call.fd);
  call.begun = !progress.ok() || *progress != env::StepProgress::kMustBlock;
  return afterProgress(call, progress, episodes, reply);
}

Dispatcher::StepTurn Dispatcher::pollStep(PendingStep& call, ConnectionEpisodes& episodes,
                                          std::string& reply) {
  return afterProgress(call, environment_.pollStep(call.episode, call.result), episodes, reply);
}

std::string Dispatcher::completeStep(PendingStep& call, ConnectionEpisodes& episodes) {
  Status status = call.begun ? environment_.finishStep(call.episode, call.result)
                             : environment_.step(call.episode, call.action, call.result);
  return closeStepReply(call, status, episodes);
}

std::string Dispatcher::stepJson(const env::StepResult& step, TensorEncoding encoding,
                                 const env::ResetResult* reset) const {
  std::string out;
  appendStepJson(out, step, encoding, reset);
  return out;
}

void Dispatcher::appendStepJson(std::string& out, const env::StepResult& step,
                                TensorEncoding encoding, const env::ResetResult* reset) const {
  // Most replies: written straight, byte for byte what the general path writes.
  size_t start = out.size();
  if (!reset && appendIntermediateStepJson(out, step, environment_.describe(), writer_, encoding))
    return;
  out.resize(start);
  out += generalStepJson(step, environment_.describe(), writer_.header(), encoding, reset);
}

} // namespace mlgo::server
