//===- mlgo/support/spawn.h - starting children that die with us -*- C++ -*-===//
///
/// \file
/// A Spawner starts child processes from one thread of its own, and every
/// child it starts is killed (SIGKILL, by the kernel) when that thread ends:
/// the child sets PR_SET_PDEATHSIG between fork and exec. So when the host
/// dies, however it dies (SIGKILL, a crash, the OOM killer), its compilers
/// die with it instead of spinning forever on a channel nobody reads.
///
/// Why a thread of its own: the kernel's "parent death" is the death of the
/// *thread* that forked, not of the process. A child forked from a worker
/// thread would be killed when that worker exits (a thread pool shrinking,
/// a connection thread ending), so all forks happen on the spawner thread,
/// which lives as long as the Spawner. The child checks getppid() after
/// prctl(): if the host already died before prctl() took effect, the child
/// exits at once instead of running orphaned.
///
/// How: vfork() from the spawner thread (no page-table copy of a large
/// host; the thread is suspended until the child execs), with every signal
/// blocked on that thread so no handler of the host can run in the child.
/// The child: PR_SET_PDEATHSIG, getppid() check, own process group, every
/// signal back to its default disposition, empty signal mask, stdin from
/// /dev/null, stdout+stderr to the given descriptor(s), every other descriptor
/// closed, execve(). A program without '/' is looked up in PATH before the
/// fork. Exec failures come back synchronously as an errno.
///
/// Ownership: every CleanupScope owns one (cleanup_scope.h), the default
/// for children started in the scope, and the Environment owns one of its
/// own (so that its shutdown() can kill its compilers at once). Either way,
/// destroy a Spawner only after everything it started is reaped: its
/// children die with its thread. There is no process-wide spawner. spawn()
/// is thread-safe and blocks until the child has exec'ed (or failed to).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_SPAWN_H
#define MLGO_SUPPORT_SPAWN_H

#include "mlgo/support/result.h"

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mlgo::support {

struct SpawnRequest {
  /// argv[0] is the program: with a '/' it is run as is, else looked up in
  /// PATH. Not empty.
  std::vector<std::string> argv;
  /// The child's whole environment, "NAME=VALUE" entries.
  std::vector<std::string> environment;
  /// Becomes the child's stdout and stderr (not closed here).
  int outputFd = -1;
  /// When set (>= 0), becomes the child's stderr instead (not closed here).
  int errorFd = -1;
};

class Spawner {
public:
  Spawner();
  /// Ends the thread; every child still running that it started gets
  /// SIGKILL from the kernel.
  ~Spawner();
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;

  /// Starts the child (see the file comment) and returns its pid, the leader
  /// of a new process group. Errors: kNotFound (no such program; the message
  /// names it), kIo (fork or exec failed, naming the program and errno).
  Result<pid_t> spawn(const SpawnRequest& request);

  /// Ends the thread now instead of at destruction (a host shutting down
  /// while compiles hang): every child it started that still runs gets
  /// SIGKILL from the kernel at once, and later spawn() calls fail (kIo).
  /// Their owners see them die and reap them as usual. Waits for a spawn
  /// under way to finish. Idempotent, thread-safe; never call it from a
  /// child-owning thread that must not block for a few milliseconds.
  void stop();

private:
  struct Job;
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> queue_;
  bool stopping_ = false;
  std::once_flag joined_;
  std::thread thread_;
};

} // namespace mlgo::support

#endif // MLGO_SUPPORT_SPAWN_H
