//===- mlgo/server/connection.h - one agent connection ----------*- C++ -*-===//
///
/// \file
/// One agent connection: reads newline-delimited requests from a byte
/// stream, hands them to the Dispatcher, writes one response line per request
/// line, in order.
///
/// - Lines are handled one after another, in the order received; the items
///   of a batch run in parallel on the FairExecutor (so stepping many
///   episodes per round trip uses many compilers) and are answered together,
///   in order.
/// - A line longer than the limit is answered with `line_too_long` and
///   skipped up to its newline; the connection stays usable.
/// - Backpressure, both ways: reading pauses while a line is being handled,
///   and while the replies queued for the client reach
///   ConnectionLimits::maxQueuedReplies or maxQueuedBytes (a client that
///   sends and never reads). Lines already read wait too; handling resumes
///   as the client drains. Memory per connection is so bounded by about
///   maxQueuedBytes + one reply + maxLineBytes + one read buffer.
/// - A timer closes episodes whose agent went quiet (Dispatcher::expireIdle).
/// - When the peer goes away, every episode of the connection is closed and
///   its compiler killed.
/// - shutdown() (the server stopping) writes what is queued for at most
///   kShutdownGrace, then closes the transport whatever the client does.
///
/// Threading (who runs what):
/// - The server's I/O threads run every handler of a connection on its
///   strand: reading, splitting lines, decoding JSON, answering the
///   requests that never wait (describe, errors, unknown methods) and
///   writing. Nothing on the strand ever waits for a compiler, a job slot,
///   a baseline or a lock an environment call holds.
/// - A lone `step` (not in a batch) runs on the strand in turns
///   (Dispatcher::beginStep, env::Environment::beginStep): the action is
///   written to the compiler's fifo, a dup() of the compiler's stream
///   descriptor is waited on by the io_context, and the next request is
///   read and answered from the strand when it arrives. So the common step
///   costs the same four wake-ups as a bare relay (agent -> server ->
///   compiler -> server -> agent) instead of six, and no system call beyond
///   the reads and writes themselves: the episode's stream stays registered
///   from step to step and one patience timer per connection watches the
///   wait (connection_step.cc). Whatever may wait goes to
///   the FairExecutor: a step that cannot start at once (no job slot free,
///   truncation due), the end of a compile (clang exiting, scoring, the
///   baseline), and a compiler that takes longer than kStepPatience to
///   answer (its compile timeout is then enforced by the worker). The only
///   lock the strand may then wait for is the episode's own, held by a
///   worker closing that episode (an agent-timeout expiry racing the step):
///   as long as killing and reaping its compiler takes, milliseconds.
/// - Every other request that may wait (Dispatcher::isBlocking: reset,
///   step in a batch, close) and every episode clean-up (idle expiry,
///   closing all on disconnect) runs on the FairExecutor, whose workers may
///   block for as long as the environment takes (up to --compile-timeout);
///   the result is posted back to the strand, which writes it.
/// Why not everything asynchronous: the environment's calls are blocking
/// by contract (environment.h, shared with the in-process Python core);
/// only the hot path, one decision after another, is split into turns.
/// Ordering: a connection handles one line at a time and writes its reply
/// before it starts the next, so replies come in request order; a batch's
/// replies come in item order.
/////===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_CONNECTION_H
#define MLGO_SERVER_CONNECTION_H

#include "mlgo/server/dispatcher.h"
#include "mlgo/server/fair_executor.h"

#include <boost/asio.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace mlgo::server {

struct ConnectionLimits {
  size_t maxLineBytes = 1 << 20;
  size_t maxBatch = 1024;
  /// Replies written but not yet taken by the client (count, bytes) past
  /// which the connection stops handling and reading lines.
  size_t maxQueuedReplies = 64;
  size_t maxQueuedBytes = 16 << 20;
};

/// How long a lone step waits for its compiler on the I/O thread before a
/// worker takes the wait over (see the threading notes above).
inline constexpr std::chrono::milliseconds kStepPatience{100};

/// How long a server shutting down keeps writing queued replies.
inline constexpr std::chrono::milliseconds kShutdownGrace{250};

/// The transport-independent part of a connection.
class Connection : public std::enable_shared_from_this<Connection> {
public:
  using OnClosed = std::function<void(uint64_t id)>;
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  Connection(Strand strand, Dispatcher& dispatcher, FairExecutor& executor, ConnectionLimits limits,
             uint64_t id, std::string peer, OnClosed onClosed);
  virtual ~Connection() = default;

  void start();
  /// Stops reading and closes the transport (within kShutdownGrace);
  /// episodes are closed as for a vanished peer. Safe to call more than
  /// once, from any thread. Never blocks.
  void shutdown();
  const Strand& strand() const { return strand_; }

  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }

protected:
  using ReadHandler = std::function<void(boost::system::error_code, size_t)>;
  using WriteHandler = std::function<void(boost::system::error_code)>;

  virtual void asyncRead(boost::asio::mutable_buffer buffer, ReadHandler handler) = 0;
  virtual void asyncWrite(const std::string& data, WriteHandler handler) = 0;
  virtual void closeTransport() = 0;

  Strand strand_;

private:
  void readMore();
  void onRead(boost::system::error_code ec, size_t bytes);
  void processNextLine();
  void handleLine(std::string line);
  void finishLine(std::shared_ptr<std::vector<std::optional<std::string>>> replies, bool batch);
  void send(std::string line);
  void writeNext();
  void onWritten(boost::system::error_code ec);
  /// Too many replies queued: neither read nor handle lines.
  bool congested() const;
  void armIdleTimer();
  void onPeerGone(const char* why);
  void closeTransportOnce();
  void closeStepDone();

  // A lone step in turns (connection_step.cc).
  using StepDone = std::function<void(std::string reply)>;
  struct StepWait;
  struct CompilerWatch;
  void startStep(const protocol::rpc::Request& request, StepDone done);
  void armStepWait(std::shared_ptr<StepWait> wait, std::shared_ptr<CompilerWatch> watch);
  void abandonStepWait(StepWait& wait);
  void dropWatch();
  void armPatience(std::chrono::steady_clock::time_point at);
  void onPatience();
  void onCompilerReadable(std::shared_ptr<StepWait> wait, boost::system::error_code ec);
  void finishStepOnWorker(std::shared_ptr<Dispatcher::PendingStep> call, StepDone done);

  Dispatcher& dispatcher_;
  FairExecutor& executor_;
  ConnectionLimits limits_;
  uint64_t id_;
  std::string peer_;
  OnClosed onClosed_;

  std::array<char, 65536> readBuffer_;
  std::string partial_;     ///< Bytes of the line being received.
  bool discarding_ = false; ///< Skipping the rest of an over-long line.
  std::deque<std::string> lines_;
  bool busy_ = false;     ///< A line is being handled.
  bool handling_ = false; ///< Inside handleLine() (answers may come synchronously).
  bool reading_ = false;
  bool peerGone_ = false; ///< No more input will come.
  bool closed_ = false;   ///< Cleanup started (episodes closing).
  bool transportClosed_ = false;
  int closeStepsLeft_ = 2;
  std::deque<std::string> writes_;
  size_t queuedBytes_ = 0; ///< Bytes in writes_.
  bool writing_ = false;
  ConnectionEpisodes episodes_;
  std::atomic<bool> expiryQueued_{false}; ///< An expireIdle task waits in the executor.
  boost::asio::steady_timer idleTimer_;
  boost::asio::steady_timer shutdownTimer_;
  /// The compiler stream of the episode stepped last, kept registered from
  /// step to step (at most one descriptor per connection; dropped when its
  /// compile ends, when another episode is stepped, or with the connection).
  std::shared_ptr<CompilerWatch> watch_;
  /// The lone step waiting for its compiler, if any (one line at a time).
  std::shared_ptr<StepWait> waiting_;
  /// Hands a wait longer than kStepPatience to a worker; armed only while a
  /// step waits, at most once per kStepPatience.
  boost::asio::steady_timer patience_;
  bool patienceArmed_ = false;
};

/// A Connection over any Asio stream socket or descriptor.
template <typename Stream> class StreamConnection final : public Connection {
public:
  StreamConnection(Stream stream, Strand strand, Dispatcher& dispatcher, FairExecutor& executor,
                   ConnectionLimits limits, uint64_t id, std::string peer, OnClosed onClosed)
      : Connection(std::move(strand), dispatcher, executor, limits, id, std::move(peer),
                   std::move(onClosed)),
        stream_(std::move(stream)) {}

protected:
  void asyncRead(boost::asio::mutable_buffer buffer, ReadHandler handler) override {
    stream_.async_read_some(buffer, std::move(handler));
  }
  void asyncWrite(const std::string& data, WriteHandler handler) override {
    boost::asio::async_write(
        stream_, boost::asio::buffer(data),
        [h = std::move(handler)](boost::system::error_code ec, size_t) { h(ec); });
  }
  void closeTransport() override {
    boost::system::error_code ignored;
    stream_.close(ignored);
  }

private:
  Stream stream_;
};

/// stdin + stdout as one connection.
class StdioConnection final : public Connection {
public:
  StdioConnection(boost::asio::posix::stream_descriptor in,
                  boost::asio::posix::stream_descriptor out, Strand strand, Dispatcher& dispatcher,
                  FairExecutor& executor, ConnectionLimits limits, OnClosed onClosed)
      : Connection(std::move(strand), dispatcher, executor, limits, 0, "stdio",
                   std::move(onClosed)),
        in_(std::move(in)), out_(std::move(out)) {}

protected:
  void asyncRead(boost::asio::mutable_buffer buffer, ReadHandler handler) override {
    in_.async_read_some(buffer, std::move(handler));
  }
  void asyncWrite(const std::string& data, WriteHandler handler) override {
    boost::asio::async_write(
        out_, boost::asio::buffer(data),
        [h = std::move(handler)](boost::system::error_code ec, size_t) { h(ec); });
  }
  void closeTransport() override {
    boost::system::error_code ignored;
    in_.close(ignored);
    out_.close(ignored);
  }

private:
  boost::asio::posix::stream_descriptor in_, out_;
};

} // namespace mlgo::server

#endif // MLGO_SERVER_CONNECTION_H
