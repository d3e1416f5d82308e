//===- mlgo/env/compiler_session.h - one interactive compile ----*- C++ -*-===//
///
/// \file
/// A CompilerSession is one compiler process answering to the host over a
/// fifo pair (LLVM's InteractiveModelRunner protocol, see
/// mlgo/protocol/training_log.h):
///
///   host                                   compiler (clang -mllvm ...-channel-base=B)
///   mkfifo B.in, B.out
///   open B.in  O_RDONLY|O_NONBLOCK  (a reader of the host's own, never read)
///   open B.in  O_WRONLY|O_NONBLOCK  (succeeds: a reader exists), then blocking
///   open B.out O_RDONLY|O_NONBLOCK
///   spawn                           ---->  open B.in for reading  (returns at once)
///                                          open B.out for writing (returns at once)
///                                   <----  header line, {"context":...}
///                                   <----  {"observation":N} + tensors
///   write advice bytes              ---->  (blocked reading B.in until then)
///                                   <----  ... EOF on B.out (codegen goes on)
///   wait for exit, read the object
///
/// No open can block, on either side, so the host never polls for the
/// compiler's opens (the ENXIO-retry handshake would cost a retry loop and
/// up to one back-off interval of compiler stall per compile). The compiler
/// may never open the fifos (-O0, optnone, nothing reaching the register
/// allocator): it then exits without writing anything, and next() returns
/// kEnd with header() == nullptr. The host's own reader on B.in also keeps
/// a dying compiler from raising SIGPIPE in the host; compiler death is seen
/// on B.out and through the process itself (pidfd). All host waits are
/// poll()s with deadlines.
///
/// Deadlines: `compileTimeout` bounds the time the host spends waiting on the
/// compiler (from spawn to the next decision request, between an answer and
/// the next request, and until exit), not the time the agent takes to answer.
/// `maxObservations` caps the decision requests. Crossing either, a stream
/// error, or a compiler that dies kills the compiler's process group, reaps
/// it, and makes the session failed: every later call returns the same error.
///
/// Several channels (CompileCommand::extraChannels; clang's eviction and
/// priority channels in one compile): the session makes and opens every pair
/// as above before the spawn and waits on all B.out at once. The compiler
/// may open all, some or none of them, whenever it gets to them; it asks on
/// one channel at a time and waits for that answer, so at most one request
/// is pending across the channels. next() returns the requests in the order
/// they arrive, each naming its channel (Observation::channel); answer()
/// answers on the pending request's channel. A request on a second channel
/// while one is pending is a protocol error (kCompiler) naming both
/// channels: next() fails with it when both arrive in one wait, and answer()
/// first reads the other channels (without waiting) and fails with it,
/// writing no answer, when one of them holds a request. kEnd comes once
/// every channel has ended: its B.out reached EOF, or the compiler exited
/// without opening it. Deadlines, the observation cap (counting every
/// channel's requests) and failures are the session's, as for one channel.
/// With one channel (extraChannels empty) none of this changes what the
/// session does.
///
/// Thread safety: none; a session is used by one thread at a time. Destroying
/// a session kills and reaps the compiler and removes its directory.
///
/// A plain compile (no fifo, no decisions) is run_compile.h's runCompile.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_COMPILER_SESSION_H
#define MLGO_ENV_COMPILER_SESSION_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/interrupt.h"
#include "mlgo/support/subprocess.h"
#include "mlgo/support/temp_dir.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mlgo::env {

/// Everything needed to run one compile.
struct CompileCommand {
  /// Program and arguments (argv[0] = the compiler).
  std::vector<std::string> argv;
  /// Fifo base `B` named in argv (the session creates B.in and B.out); empty
  /// for a plain, non-interactive compile. Channel 0.
  std::filesystem::path channelBase;
  /// Further fifo bases named in argv, channels 1, 2, ... (e.g. the priority
  /// channel beside the eviction channel in channelBase). Needs channelBase;
  /// distinct paths; at most kMaxExtraChannels (kInvalidArgument otherwise).
  std::vector<std::filesystem::path> extraChannels;
  /// The object file argv writes.
  std::filesystem::path objectPath;
  /// The remarks file argv writes, if any.
  std::filesystem::path remarksPath;
  /// "NAME=VALUE" environment additions for the compiler.
  std::vector<std::string> environment;
  /// The compiler writes to the host's own stdout and stderr (a compiler
  /// launcher's build sees them unchanged); reports' `output` stays empty.
  bool inheritOutput = false;
};

/// Most extra channels one session serves (its waits poll at most 8
/// descriptors: every channel's B.out, the compiler's output and its exit).
inline constexpr size_t kMaxExtraChannels = 3;

struct SessionLimits {
  /// Time the host may wait on the compiler in total (see file comment).
  std::chrono::milliseconds compileTimeout{std::chrono::minutes(10)};
  /// Most decision requests one compile may make.
  uint64_t maxObservations = 4'000'000;
  /// When set, every byte read from B.out is also appended to this file
  /// (recording streams for tests and debugging); channel i > 0 records to
  /// this path with ".<i>" appended.
  std::filesystem::path recordStreamTo;
  /// Where the compiler and its directory are registered (cleanup_scope.h);
  /// required, and must outlive the session.
  support::CleanupScope* scope = nullptr;
  /// Starts the compiler (see spawn.h); null = the scope's spawner.
  support::Spawner* spawner = nullptr;
  /// Set to true by another thread when the owner shuts down. Process
  /// sessions ignore it (stopping `spawner` kills their compilers); a
  /// CompilerDriver that starts no process through `spawner` must make its
  /// waits return within milliseconds once it is true (compiler_driver.h).
  const std::atomic<bool>* cancel = nullptr;
  /// The owner's per-call stop request (support/interrupt.h); null = none.
  /// When armed, every wait of the session slices and asks it, and a yes
  /// fails the session with kInterrupted (the compiler is killed). Must
  /// outlive the session; used by the thread calling the session.
  support::Interrupt* interrupt = nullptr;
};

enum class SessionEvent : uint8_t {
  kObservation, ///< A decision request; answer() it before calling next() again.
  kEnd,         ///< The stream ended; call finish().
};

/// One decision request. Views stay valid until the next call on the session.
struct Observation {
  std::string_view context;
  int64_t id = 0;
  /// All feature bytes, in header order.
  std::span<const std::byte> data;
  /// One view per header feature.
  std::span<const std::span<const std::byte>> tensors;
  /// The channel that asked: 0 = CompileCommand::channelBase, i = its
  /// extraChannels[i - 1]. Always 0 for a one-channel session.
  size_t channel = 0;
};

/// One channel's part of a compile.
struct ChannelReport {
  /// False when the compiler never opened this channel.
  bool opened = false;
  uint64_t observations = 0;
  /// Context names on this channel, in order of first appearance.
  std::vector<std::string> contexts;
};

/// How a compile went.
struct CompileReport {
  support::ExitStatus exit;
  /// The compiler's stdout and stderr (bounded; see OutputBuffer).
  std::string output;
  /// Decision requests on all channels.
  uint64_t observations = 0;
  /// Context names in order of first appearance (channel 0's, then names
  /// only other channels gave, in channel order).
  std::vector<std::string> contexts;
  /// False when the compiler opened none of the channels.
  bool channelOpened = false;
  /// Per channel, in channel order (empty for a plain compile).
  std::vector<ChannelReport> channels;
  /// Spawn to reap.
  std::chrono::nanoseconds wallTime{0};
  /// Host time spent waiting on the compiler (excludes agent think time).
  std::chrono::nanoseconds compilerTime{0};
  /// CPU time of the compiler process (user + system), from wait4.
  std::chrono::nanoseconds compilerCpu{0};
};

class CompilerSession {
public:
  virtual ~CompilerSession() = default;

  /// Waits for the next decision request or the end of the stream.
  virtual Result<SessionEvent> next(Observation& observation) = 0;
  /// For hosts that wait on many compilers from one thread (the server's
  /// I/O threads): a descriptor that becomes readable (or hangs up) when the
  /// compiler sends more of its stream, after which tryNext() may return
  /// more; -1 when the session offers none (next() is then the only way),
  /// as a session with several channels does.
  /// Owned by the session and valid until it fails, finishes or is
  /// destroyed: a poller registers a dup() of it, never the descriptor
  /// itself.
  virtual int streamFd() const { return -1; }
  /// next() without waiting: reads whatever the compiler has sent (all of
  /// it, so an edge-triggered poller sees the next arrival) and returns the
  /// event next() would, or nullopt when no whole request is buffered yet.
  /// Same errors and effects as next(). The wait between an answer and the
  /// request that follows counts towards compileTimeout whichever of the
  /// two returns it, but only next() enforces the deadline: a host that
  /// polls must hand a wait that runs long to next().
  virtual Result<std::optional<SessionEvent>> tryNext(Observation& observation);
  /// Answers the pending observation with exactly the advice tensor's bytes
  /// of its channel's header. kInvalidArgument (session unchanged) when
  /// there is no pending observation or the size is not the advice spec's;
  /// with several channels, fails the session when another channel holds a
  /// request (see the file comment).
  virtual Status answer(std::span<const std::byte> advice) = 0;
  /// After kEnd: waits for the compiler to exit. Fails (kCompiler) unless it
  /// exited with code 0 and wrote the object file; kTimeout past the budget.
  virtual Result<CompileReport> finish() = 0;
  /// Kills the compiler and releases everything. Idempotent.
  virtual void abort() = 0;

  /// The header, once next() has returned (nullptr if the compiler never
  /// opened the channel). Channel 0's.
  virtual const protocol::LogHeader* header() const = 0;
  /// Channel `channel`'s header once the compiler has written it (nullptr
  /// before, for a channel never opened, and for no such channel). Sessions
  /// with one channel need not override it.
  virtual const protocol::LogHeader* channelHeader(size_t channel) const {
    return channel == 0 ? header() : nullptr;
  }
  /// Observations so far (all channels).
  virtual uint64_t observations() const = 0;
  /// The compiler's process id (for diagnostics and fault-injection tests).
  virtual pid_t pid() const = 0;
  /// How the compiler ended, once it has been reaped (after finish(), or
  /// after a failure; a compiler the session killed shows SIGKILL); nullopt
  /// before, and for sessions without a process.
  virtual std::optional<support::ExitStatus> exitStatus() const { return std::nullopt; }
  /// The files of this compile.
  virtual const CompileCommand& command() const = 0;
};

/// Creates the fifos, spawns the compiler and returns at once (the handshake
/// happens in the first next()). Takes ownership of `dir`, which must hold
/// the channel base, object and remarks paths; it is removed with the
/// session. kNotFound when the compiler does not exist.
Result<std::unique_ptr<CompilerSession>>
startCompilerSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits);

} // namespace mlgo::env

#endif // MLGO_ENV_COMPILER_SESSION_H
