//===- env/request_stream.h - a compiler's records as requests --*- C++ -*-===//
///
/// \file
/// Internal to the env layer: the bookkeeping every CompilerSession does on the
/// stream a compiler writes, whatever feeds it (a fifo for the real process,
/// a recorded stream for the fake driver). It turns records into decision
/// requests, remembers the contexts seen, enforces the observation cap and the
/// request/answer alternation, and checks answers against the header.
///
/// Threads: none of its own; one session uses it from one thread at a time.
/// Errors: values; see each method.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_REQUEST_STREAM_H
#define MLGO_ENV_REQUEST_STREAM_H

#include "mlgo/env/compiler_session.h"
#include "mlgo/protocol/stream_reader.h"

#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace mlgo::env::detail {

class RequestStream {
public:
  /// `program` names the compiler in messages; `maxObservations` is the cap.
  /// With `sharedCount` (a counter the owner keeps for several streams of one
  /// compile, and which must outlive this one), the cap applies to that
  /// counter, which every request of this stream increments; observations()
  /// still counts this stream's own.
  RequestStream(std::string program, uint64_t maxObservations, uint64_t* sharedCount = nullptr)
      : program_(std::move(program)), maxObservations_(maxObservations),
        sharedCount_(sharedCount) {}

  /// Where the session feeds the bytes the compiler wrote (and finish()es at EOF).
  protocol::StreamReader& reader() { return reader_; }

  enum class Next {
    kObservation, ///< `observation` holds a request (views valid until the next feed).
    kEnd,         ///< The stream ended properly.
    kNeedMore,    ///< Every record fed so far is consumed: feed more (or see the EOF).
  };
  /// Consumes records up to the next decision request or the end. Errors
  /// (the session must fail with them): kCompiler for an outcome record or a
  /// request past the cap; a malformed stream's error, prefixed with
  /// "malformed stream from PROGRAM", after which malformed() is true.
  Result<Next> advance(Observation& observation);
  /// True once advance() failed on a malformed stream: the compiler may be
  /// dying, and its exit status may say why.
  bool malformed() const { return malformed_; }

  /// kInvalidArgument (the session goes on) while a request awaits its answer.
  Status expectNext() const;
  /// Checks an answer to the pending request. kInvalidArgument (the session
  /// goes on) when none is pending or the size is wrong; kCompiler (the
  /// session must fail) when the header declares no advice tensor.
  Status checkAnswer(std::span<const std::byte> advice) const;
  /// The pending request was answered.
  void answered() { pending_ = false; }
  /// Whether a request awaits its answer.
  bool pending() const { return pending_; }

  const protocol::LogHeader* header() const {
    return reader_.hasHeader() ? &reader_.header() : nullptr;
  }
  bool channelOpened() const { return reader_.hasHeader(); }
  uint64_t observations() const { return observations_; }
  /// The distinct contexts, in the order they first appeared.
  const std::vector<std::string>& contexts() const { return contexts_; }

private:
  std::string program_;
  uint64_t maxObservations_;
  uint64_t* sharedCount_;
  protocol::StreamReader reader_;
  uint64_t observations_ = 0;
  bool pending_ = false;
  bool malformed_ = false;
  std::vector<std::string> contexts_;
  std::unordered_set<std::string> contextSet_;
};

} // namespace mlgo::env::detail

#endif // MLGO_ENV_REQUEST_STREAM_H
