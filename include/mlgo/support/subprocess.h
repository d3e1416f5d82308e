//===- mlgo/support/subprocess.h - a child process we own -------*- C++ -*-===//
///
/// \file
/// A child process started from an argv vector (never a shell), in its own
/// process group, with stdin from /dev/null and stdout+stderr merged into one
/// pipe that the owner drains into a bounded buffer while the child runs.
///
/// The child is started by a Spawner (spawn.h): from one long-lived thread,
/// with vfork (no page-table copy of the large host), in its own process
/// group, every other descriptor closed, and PR_SET_PDEATHSIG so that it dies
/// with the host whatever kills the host. (Not Boost.Process: its 1.74 POSIX
/// launcher forks the whole host and leaks descriptors between concurrent
/// spawns.)
///
/// Ownership: the Subprocess owns the child until it is reaped. Destroying a
/// Subprocess whose child still runs kills the child's whole process group
/// with SIGKILL and reaps it; it never blocks on a live child otherwise.
/// The process group is only ever signalled before the leader is reaped, so
/// a recycled pid can never be hit.
///
/// Exit detection uses a pidfd when the kernel has one (Linux >= 5.3); else
/// waits poll waitpid(WNOHANG) every few milliseconds.
///
/// Thread safety: none; one owner thread at a time.
///
/// Every live child is also registered in the CleanupScope it was started
/// in (cleanup_scope.h), so an interrupted run can kill them all. Reaping
/// and unregistering happen under the scope's lock, so a cleanup never
/// signals a reaped (possibly recycled) pid. The scope must outlive the
/// Subprocess.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_SUBPROCESS_H
#define MLGO_SUPPORT_SUBPROCESS_H

#include "mlgo/support/result.h"

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::support {

class CleanupScope;
class Spawner;

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

/// What a child wrote to stdout/stderr, bounded: the first `headLimit` bytes
/// and the last `tailLimit` bytes are kept, the middle is counted and dropped.
class OutputBuffer {
public:
  explicit OutputBuffer(size_t headLimit = 48 << 10, size_t tailLimit = 16 << 10);

  void append(std::string_view bytes);
  /// The kept text; a marker line says how many bytes were dropped.
  std::string text() const;
  /// Every byte ever appended.
  uint64_t totalBytes() const { return total_; }

private:
  size_t headLimit_;
  size_t tailLimit_;
  std::string head_;
  std::string tail_; ///< Ring buffer once full; tailStart_ is its oldest byte.
  size_t tailStart_ = 0;
  uint64_t total_ = 0;
};

/// How a child ended.
struct ExitStatus {
  bool exited = false; ///< Ended by exit(); `code` is valid.
  int code = 0;
  int signal = 0; ///< Killed by this signal (when !exited).

  bool success() const { return exited && code == 0; }
  /// "exited with code 1", "killed by signal 11 (Segmentation fault)".
  std::string describe() const;
};

struct SpawnOptions {
  /// argv[0] is the program: a path with a '/' is run as is, a bare name is
  /// looked up in PATH. Must not be empty.
  std::vector<std::string> argv;
  /// "NAME=VALUE" entries added to (and overriding) the host's environment.
  std::vector<std::string> extraEnvironment;
  /// Starts the child (see spawn.h); null = the scope's spawner. Must
  /// outlive the child.
  Spawner* spawner = nullptr;
  /// The child writes to the host's own stdout and stderr (a compiler
  /// launcher's); no pipe is made, outputFd() is -1 and output() stays empty.
  bool inheritOutput = false;
};

class Subprocess {
public:
  /// Starts the child and registers it in `scope`, which must outlive the
  /// returned Subprocess. kNotFound when the program does not exist, kIo
  /// for other spawn failures (also once the scope's cleanup() began); the
  /// message names the program.
  static Result<std::unique_ptr<Subprocess>> spawn(CleanupScope& scope,
                                                   const SpawnOptions& options);

  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  /// Kills the process group and reaps the child if it still runs.
  ~Subprocess();

  pid_t pid() const { return pid_; }
  /// Read end of the merged stdout/stderr pipe (non-blocking), or -1 once
  /// it reached end of file.
  int outputFd() const { return outputFd_; }
  /// A descriptor that becomes readable when the child exits (pidfd), or -1
  /// when the kernel has none.
  int exitFd() const { return exitFd_; }

  /// Reads what is available on the output pipe into output(); never blocks.
  void drainOutput();
  /// Reaps the child if it has exited; never blocks. True once reaped.
  bool tryReap();
  bool reaped() const { return status_.has_value(); }

  /// Waits until the child exits, draining its output. kTimeout at
  /// `deadline` (the child is left running).
  Status waitUntil(Deadline deadline);

  /// SIGKILLs the child's process group (if not reaped yet) and reaps it.
  void kill();
  /// Sends `signal` to the child's process group if not reaped yet.
  void signalGroup(int signal);

  /// Set once reaped.
  const std::optional<ExitStatus>& exitStatus() const { return status_; }
  /// Resource usage of the reaped child (zero before).
  const struct rusage& usage() const { return usage_; }
  /// Drains what is left, then returns the kept output text.
  std::string outputText();
  const OutputBuffer& output() const { return output_; }
  /// The program as given in argv[0].
  const std::string& program() const { return program_; }

private:
  Subprocess() = default;
  void closeOutput();

  CleanupScope* scope_ = nullptr;
  pid_t pid_ = -1;
  int outputFd_ = -1;
  int exitFd_ = -1;
  std::string program_;
  OutputBuffer output_;
  std::optional<ExitStatus> status_;
  struct rusage usage_ = {};
};

/// Waits until one of `fds` is readable (or hung up) or `deadline` passes,
/// whichever is first; negative entries are ignored. Returns a bit mask: bit
/// i set = fds[i] is ready (0 = the deadline passed). At most 8 fds. EINTR
/// is retried. A deadline in the past polls once. Allocation-free.
Result<unsigned> waitReadable(std::span<const int> fds, Deadline deadline);

} // namespace mlgo::support

#endif // MLGO_SUPPORT_SUBPROCESS_H
