//===- mlgo/support/cleanup_scope.h - what a run must not leave behind -*- C++ -*-===//
///
/// \file
/// A CleanupScope is the set of children and temporary paths that belong to
/// one run (one Environment, one trace, one `info`): every live child of a
/// Subprocess started in it, and every temporary path registered in it
/// (TempDir, a trace's `.tmp-` files, a cache entry being written).
/// cleanup() kills the former, waits for them to die, and removes the latter.
///
/// Why: a clang in interactive mode whose host vanished does not exit; it
/// busy-spins at 100% CPU on the closed channel forever, in a process group
/// of its own that the terminal's signal never reaches. An interrupted host
/// must therefore kill its compilers itself.
///
/// There is no process-wide registry: the command line (src/) creates the
/// scope of each run and hands it down (EnvironmentOptions::cleanup, or a
/// `CleanupScope&` parameter), and its signal handling (src/cli/interrupt.h)
/// calls cleanup() on that scope. Two scopes in one process are independent:
/// cleaning up one leaves the other's children running and its paths in
/// place. The library never handles signals itself; the server shuts down in
/// order on its own signal set.
///
/// Ownership and lifetime: whoever creates a scope owns it (a local, a
/// member, or a std::shared_ptr when several owners share it, as
/// Environments do). **The scope must outlive everything registered in it**:
/// every Subprocess, TempDir, TraceFiles and BaselineCache made in it keeps a
/// pointer to it and unregisters on destruction. Destroying the scope runs
/// cleanup() for whatever is still registered (a bug in the owner, but no
/// compiler is left spinning), then ends the scope's spawner thread.
///
/// The spawner: the scope owns a Spawner (spawn.h), the default for
/// children started in it. Its children get PR_SET_PDEATHSIG, which the
/// kernel ties to the *thread* that forked them: the spawner's thread. That
/// thread lives exactly as long as the scope, and the scope outlives its
/// children (above), so a child is killed by the kernel only when the scope
/// itself goes away or the whole host dies (SIGKILL, a crash: then the next
/// start reaps its temporary directories, TempDir::reapOrphans). An owner
/// may start children with a Spawner of its own (SpawnOptions::spawner; the
/// Environment does, so that its shutdown() can kill its compilers at once);
/// that spawner must also outlive its children.
///
/// Thread safety: every member is thread-safe. cleanup() is not
/// async-signal-safe: call it from a normal thread (asio::signal_set).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_CLEANUP_SCOPE_H
#define MLGO_SUPPORT_CLEANUP_SCOPE_H

#include "mlgo/support/result.h"
#include "mlgo/support/spawn.h"

#include <sys/resource.h>
#include <sys/types.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace mlgo::support {

class CleanupScope {
public:
  CleanupScope() = default;
  /// Runs cleanup() on whatever is still registered, then ends the
  /// spawner thread.
  ~CleanupScope();
  CleanupScope(const CleanupScope&) = delete;
  CleanupScope& operator=(const CleanupScope&) = delete;

  /// Creates a temporary file or directory with `create`, which returns its
  /// path, and registers it for removal, both under the path lock: a
  /// cleanup never falls between creating and registering (it would
  /// otherwise finish, and the process die, with the path unregistered).
  /// Once cleanup() began, refuses without calling `create` (kIo, "shutting
  /// down"). `create` must be quick and must not call back into the scope.
  Result<std::filesystem::path>
  createPath(const std::function<Result<std::filesystem::path>()>& create);
  /// Unregisters it (its owner removed it).
  void removePath(const std::filesystem::path& path);

  /// Renames each registered temporary `first` to its final `second` and
  /// unregisters it, all under the path lock: once cleanup() began, nothing
  /// is renamed (kIo, "interrupted") so a run cut short never replaces a
  /// result. Stops at the first failing rename (kIo naming both).
  Status
  commitPaths(std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames);

  /// True once cleanup() began: failures from then on are its doing, not the
  /// compilers' (callers may keep them quiet).
  bool cleanupBegan() const;

  /// Stops commits, SIGKILLs the process group of every live child
  /// registered here and waits (up to 5 s) until each is dead, then removes
  /// every registered path. Later spawns and createPath() calls in this
  /// scope fail (kIo). Idempotent. Returns the number of child groups
  /// killed.
  size_t cleanup();

  /// The spawner children of this scope start from by default.
  Spawner& spawner() { return spawner_; }

  /// What is registered now (for tests and diagnostics).
  size_t liveChildren() const;
  size_t registeredPaths() const;

private:
  friend class Subprocess;
  /// A spawn starts: kIo naming `program` once cleanup() began. Every
  /// successful beginSpawn() is followed by one endSpawn().
  Status beginSpawn(std::string_view program);
  /// The spawn ended; `pid` > 0 registers the child. cleanup() waits for
  /// spawns under way, so a child started meanwhile is killed too.
  void endSpawn(pid_t pid);
  /// wait4(pid, WNOHANG) and, when it returns non-zero, unregisters `pid`
  /// in the same critical section: cleanup() never signals a reaped (and
  /// possibly recycled) pid. Returns wait4's result.
  pid_t reapChild(pid_t pid, int* status, struct rusage* usage);
  size_t killChildren();

  // Declared first: its thread ends last, after the destructor's cleanup().
  Spawner spawner_;

  mutable std::mutex childMutex_;
  std::condition_variable idle_; ///< Signalled when `spawning_` drops to 0.
  std::unordered_set<pid_t> live_;
  unsigned spawning_ = 0;       ///< Spawns under way (their pid is not in live_ yet).
  bool childrenClosed_ = false; ///< cleanup() began: no more spawns.

  mutable std::mutex pathMutex_;
  std::unordered_set<std::string> paths_;
  bool pathsClosed_ = false; ///< cleanup() began: no creates, no commits.
};

} // namespace mlgo::support

#endif // MLGO_SUPPORT_CLEANUP_SCOPE_H
