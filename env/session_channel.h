//===- env/session_channel.h - one fifo pair of a compiler session -*- C++ -*-===//
///
/// \file
/// Internal to the env layer: the channels of a process CompilerSession (see
/// mlgo/env/compiler_session.h for the handshake and the rules across
/// several channels). One channel is the host's ends of the fifo pair
/// B.in/B.out, the requests parsed from what the compiler wrote on B.out, an
/// optional recording of those bytes, and whether the stream has ended.
///
/// Ownership: owns its descriptors and recording file (closed by close() or
/// the destructor); the fifos themselves live in the session's directory.
/// Threads: none of its own; used by one session from one thread.
/// Blocking: never (reads are non-blocking; a write blocks only while the
/// compiler's pipe buffer is full, as FifoChannel::write does).
/// Errors: values naming the fifo.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_SESSION_CHANNEL_H
#define MLGO_ENV_SESSION_CHANNEL_H

#include "mlgo/support/fifo_channel.h"
#include "request_stream.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::env::detail {

class SessionChannel {
public:
  /// `base` is the fifo base B; `program`, `maxObservations` and
  /// `sharedCount` go to the RequestStream (request_stream.h).
  SessionChannel(std::filesystem::path base, std::string program, uint64_t maxObservations,
                 uint64_t* sharedCount);
  SessionChannel(const SessionChannel&) = delete;
  SessionChannel& operator=(const SessionChannel&) = delete;
  ~SessionChannel() { close(); }

  /// Makes the fifos and opens the host's ends (FifoChannel::open), then,
  /// with a non-empty `recordTo`, opens that file for the recording. kIo.
  Status open(const std::filesystem::path& recordTo);
  /// Reads what B.out holds without blocking: one read, or with `exited`
  /// (the compiler is gone) until nothing is left. Sees the end of the
  /// stream: 0 bytes (all writers gone), or nothing from a compiler that
  /// has exited (it may never have opened B.out). Call it only when B.out
  /// polled readable or the compiler has exited: on a fifo never opened by
  /// a writer a read also returns 0. kIo naming the fifo.
  Status read(bool exited);
  /// Parses up to the next request (RequestStream::advance); after a result
  /// of kEnd, or kNeedMore once the stream ended, done() is true.
  Result<RequestStream::Next> advance(Observation& observation);

  /// Writes an answer to B.in.
  Status write(std::span<const std::byte> bytes) { return fifo_.write(bytes); }
  /// Closes the descriptors and the recording. Idempotent.
  void close();

  /// No request can come any more (the stream ended, or was never opened).
  bool done() const { return done_; }
  /// B.out reached its end (EOF, or the compiler exited).
  bool streamEnded() const { return streamEnded_; }
  uint64_t bytesReceived() const { return bytesReceived_; }
  int outFd() const { return fifo_.outFd(); }
  const std::filesystem::path& base() const { return base_; }
  RequestStream& requests() { return requests_; }
  const RequestStream& requests() const { return requests_; }
  /// This channel's part of the compile's report.
  ChannelReport report() const;

private:
  std::filesystem::path base_;
  support::FifoChannel fifo_;
  RequestStream requests_;
  std::FILE* record_ = nullptr;
  uint64_t bytesReceived_ = 0;
  bool streamEnded_ = false;
  bool done_ = false;
};

/// The channels of one session (channel 0 = CompileCommand::channelBase,
/// then its extraChannels; none for a plain compile), and the rules that
/// hold across them: at most one pending request, the observation cap over
/// all of them, the end once every one has ended.
class SessionChannels {
public:
  SessionChannels() = default;
  SessionChannels(const SessionChannels&) = delete;
  SessionChannels& operator=(const SessionChannels&) = delete;

  /// Makes and opens the command's channels (none without a channel base),
  /// each recording as SessionLimits::recordStreamTo says. kInvalidArgument
  /// for extra channels without a base, more than kMaxExtraChannels or a
  /// base named twice; kIo. On an error the ones opened stay (close()).
  Status open(const CompileCommand& command, const SessionLimits& limits,
              const std::string& program);

  size_t size() const { return channels_.size(); }
  bool empty() const { return channels_.empty(); }
  SessionChannel& operator[](size_t i) { return *channels_[i]; }
  const SessionChannel& operator[](size_t i) const { return *channels_[i]; }
  /// Requests on all channels.
  uint64_t observations() const { return observations_; }
  /// The channel whose request awaits its answer.
  std::optional<size_t> pending() const;

  /// Advances every channel not done to its next request: the channel of
  /// the one that came (in `observation`, with Observation::channel set),
  /// or nullopt when none did. Two at once: kCompiler naming both channels.
  Result<std::optional<size_t>> advanceAll(Observation& observation);
  /// Before answering channel `pending`: reads without waiting what every
  /// readable B.out holds (readNow) and fails (kCompiler naming both) when
  /// another channel then holds a request.
  Status checkOthersQuiet(size_t pending);
  /// Sets fds[i] to channel i's B.out while it may still be read, else -1;
  /// `fds` has at least size() entries.
  void pollFds(std::span<int> fds) const;
  /// Reads the channels whose bit in `ready` is set (bit i = channel i).
  Status readReady(unsigned ready, bool exited);
  /// Polls the channels once without waiting and reads the readable ones.
  Status readNow();

  bool allDone() const;
  bool anyMalformed() const;
  uint64_t bytesReceived() const;
  /// Grows whenever a channel receives bytes or sees its end.
  uint64_t progress() const;
  /// Fills the report's channel fields (observations, contexts,
  /// channelOpened, channels).
  void fillReport(CompileReport& report) const;
  void close();

private:
  Error twoPending(size_t pending, size_t other) const;

  std::string program_;
  uint64_t observations_ = 0;
  std::vector<std::unique_ptr<SessionChannel>> channels_;
};

} // namespace mlgo::env::detail

#endif // MLGO_ENV_SESSION_CHANNEL_H
