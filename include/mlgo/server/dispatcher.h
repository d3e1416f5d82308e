//===- mlgo/server/dispatcher.h - agent requests to environment calls -*- C++ -*-===//
///
/// \file
/// Turns decoded JSON-RPC requests (protocol/rpc.h) into calls on an
/// env::Environment and their results into response lines. Knows nothing of
/// sockets: the transport (connection.h) hands it requests and writes what it
/// returns.
///
/// Methods (see docs/protocol.md):
///   describe                       -> problem, specs, reward, corpus, clang
///   reset {module?, seed?, encoding?, options?{max_steps?, encoding?, actions?}}
///                                  -> {episode, module, observation, reward,
///                                      terminated, truncated, info}
///   step  {episode, action, encoding?}
///                                  -> {observation, reward, terminated,
///                                      truncated, info}
///   close {episode}                -> {episode, closed: true}
///
/// Episodes belong to the connection that reset them: another connection
/// gets `unknown_episode`. An episode whose agent stays silent longer than
/// the agent timeout is closed (its clang killed) and later calls on it get
/// `episode_failed` saying so.
///
/// Thread safety: handle() may run concurrently for different episodes of
/// the same connection (batches); ConnectionEpisodes guards itself.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_DISPATCHER_H
#define MLGO_SERVER_DISPATCHER_H

#include "mlgo/env/environment.h"
#include "mlgo/protocol/observation_codec.h"
#include "mlgo/protocol/rpc.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace mlgo::server {

/// Version of the agent protocol described in docs/protocol.md.
inline constexpr int kProtocolVersion = 1;

/// The episodes one connection owns.
class ConnectionEpisodes {
public:
  using Clock = std::chrono::steady_clock;

  struct Entry {
    protocol::TensorEncoding encoding = protocol::TensorEncoding::kJson;
    Clock::time_point lastActivity;
    bool inCall = false; ///< A step is running: not idle, whatever the clock says.
  };

  /// Takes a place for a reset under way unless the connection already
  /// holds `limit` episodes and places; false then.
  bool reserve(size_t limit);
  /// Gives a place back (the reset ended, before add()).
  void unreserve();
  /// Registers a new episode, in the place reserve() took for it.
  void add(env::EpisodeId id, protocol::TensorEncoding encoding);
  /// Marks the start of a call on `id`; nullopt if the connection does not
  /// own it (the second member then holds why it failed, if it did).
  std::optional<Entry> begin(env::EpisodeId id, std::string* failure);
  /// Marks the end of a call; `ended` removes the episode.
  void end(env::EpisodeId id, bool ended);
  /// Forgets `id`, remembering `why` for later calls on it.
  void fail(env::EpisodeId id, std::string why);
  /// Ids not in a call and idle since before `cutoff`.
  std::vector<env::EpisodeId> idleSince(Clock::time_point cutoff) const;
  /// Every owned id (for closing them all).
  std::vector<env::EpisodeId> all() const;
  size_t size() const;

private:
  mutable std::mutex mutex_;
  std::unordered_map<env::EpisodeId, Entry> open_;
  std::unordered_map<env::EpisodeId, std::string> failed_;
  size_t reserved_ = 0; ///< Resets under way.
};

struct DispatcherOptions {
  /// How long an episode may wait for its agent before it is closed.
  std::chrono::milliseconds agentTimeout{std::chrono::minutes(10)};
  /// Open episodes (and resets under way) one connection may hold; more
  /// resets get kBusy. One batch then cannot start more idle clangs.
  size_t maxEpisodesPerConnection = 256;
};

class Dispatcher {
public:
  Dispatcher(env::Environment& environment, DispatcherOptions options);

  /// Runs `request` for connection `episodes`. Returns the response line
  /// (without newline), or nullopt for a notification. May block for as
  /// long as the environment call takes.
  std::optional<std::string> handle(const protocol::rpc::Request& request,
                                    ConnectionEpisodes& episodes);

  /// True for methods that may wait (reset, step, close: for a compiler, a
  /// job slot, a default compile or an episode's lock); the connection runs
  /// them on its executor. Every other method (describe, unknown ones)
  /// returns at once and runs on the I/O thread.
  static bool isBlocking(std::string_view method);

  /// A lone `step` request (with an id) run without blocking, in turns
  /// (see env::Environment::beginStep): beginStep(), then, while kWaiting,
  /// pollStep() each time `call.fd` is readable. kReplied: `reply` holds the
  /// response line and the call is over. kBlocking: completeStep() must
  /// finish it on a thread that may block (it also does when the wait runs
  /// long). The episode counts as in a call (never idle) until the reply.
  struct PendingStep {
    protocol::rpc::Id id;
    env::EpisodeId episode = 0;
    protocol::TensorEncoding encoding = protocol::TensorEncoding::kJson;
    env::ActionValue action;
    env::StepResult result;
    /// The compiler's stream (kWaiting); owned by the environment.
    int fd = -1;
    /// The action reached the compiler (completeStep() finishes, not steps).
    bool begun = false;
  };
  enum class StepTurn : uint8_t { kReplied, kWaiting, kBlocking };
  StepTurn beginStep(const protocol::rpc::Request& request, ConnectionEpisodes& episodes,
                     PendingStep& call, std::string& reply);
  StepTurn pollStep(PendingStep& call, ConnectionEpisodes& episodes, std::string& reply);
  /// Blocks; returns the response line.
  std::string completeStep(PendingStep& call, ConnectionEpisodes& episodes);

  /// Closes the connection's idle episodes past the agent timeout; returns
  /// how many.
  size_t expireIdle(ConnectionEpisodes& episodes);
  /// Closes every episode of a connection that went away.
  void closeAll(ConnectionEpisodes& episodes);

  env::Environment& environment() { return environment_; }
  const DispatcherOptions& options() const { return options_; }

private:
  /// A result's JSON text, or an error with its protocol code.
  struct Reply {
    std::string json;
    std::optional<protocol::rpc::Code> code;
    std::string message;
    /// What follows the response line: a binary observation's frame
    /// (appendFrame), or nothing.
    std::string afterLine;
  };
  static Reply failure(protocol::rpc::Code code, std::string message) {
    return {{}, code, std::move(message), {}};
  }

  /// `reset` is set for reset replies (episode, module, module embedding).
  std::string stepJson(const env::StepResult& step, protocol::TensorEncoding encoding,
                       const env::ResetResult* reset) const;
  void appendStepJson(std::string& out, const env::StepResult& step,
                      protocol::TensorEncoding encoding, const env::ResetResult* reset) const;
  /// Appends what follows the reply line of `step` in `encoding`: with a
  /// binary observation, a newline and its frame; nothing for the other
  /// encodings and for an ended episode's null observation.
  void appendFrame(std::string& out, const env::StepResult& step,
                   protocol::TensorEncoding encoding) const;

  Reply describe();
  Reply reset(const llvm::json::Object& params, ConnectionEpisodes& episodes);
  /// Reads reset's options.actions (a fork's prefix) into `out`; a refusal
  /// when it is malformed (invalid_params) or an action is no number
  /// (invalid_action naming its index).
  static std::optional<Reply> prefixParam(const llvm::json::Object& options,
                                          std::vector<env::ActionValue>& out);
  Reply step(const protocol::rpc::Request& request, ConnectionEpisodes& episodes);
  /// Reads a step's params (either form) and marks the episode in a call;
  /// the reply when it cannot go on.
  std::optional<Reply> openStep(const protocol::rpc::Request& request,
                                ConnectionEpisodes& episodes, PendingStep& call);
  /// The reply of a step that ran (with `status`), ending the call.
  Reply closeStep(PendingStep& call, const Status& status, ConnectionEpisodes& episodes);
  /// closeStep, encoded for `call.id`; a result is written into the response
  /// in place (an observation is kilobytes: no copy of it per step).
  std::string closeStepReply(PendingStep& call, const Status& status,
                             ConnectionEpisodes& episodes);
  StepTurn afterProgress(PendingStep& call, const Result<env::StepProgress>& progress,
                         ConnectionEpisodes& episodes, std::string& reply);
  /// The response line for `reply` to request `id`.
  static std::string encode(const protocol::rpc::Id& id, const Reply& reply);
  Reply close(const llvm::json::Object& params, ConnectionEpisodes& episodes);

  env::Environment& environment_;
  DispatcherOptions options_;
  std::string describeJson_;    ///< Computed once.
  /// Writes observations; its header() is the observation specs as a header.
  protocol::ObservationJsonWriter writer_{protocol::LogHeader{}};
};

} // namespace mlgo::server

#endif // MLGO_SERVER_DISPATCHER_H
