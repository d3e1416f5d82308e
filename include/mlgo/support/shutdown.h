//===- mlgo/support/shutdown.h - cleaning up after an interrupted host -*- C++ -*-===//
///
/// \file
/// What an interrupted mlgo-env (SIGINT, SIGTERM, SIGHUP) must not leave
/// behind: its compilers and its temporary files. A clang in interactive mode
/// whose host vanished does not exit: it busy-spins at 100% CPU on the closed
/// channel forever, in a process group of its own that the terminal's signal
/// never reaches. So every live child (Subprocess, see subprocess.h) and
/// every temporary path (TempDir, a trace's `.tmp-` files, a cache entry
/// being written) is registered, and emergencyCleanup() kills the former,
/// waits for them to die, and removes the latter.
///
/// The library never handles signals itself: the command line does
/// (src/cli/interrupt.h), and the server shuts down in order on its own
/// signal set.
///
/// A SIGKILLed host cannot clean up, but its compilers still die with it
/// (PR_SET_PDEATHSIG, see spawn.h), and the next start removes the temporary
/// directories it left (TempDir::reapOrphans, temp_dir.h).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_SHUTDOWN_H
#define MLGO_SUPPORT_SHUTDOWN_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <functional>
#include <span>
#include <utility>

namespace mlgo::support::shutdown {

/// Creates a temporary file or directory with `create`, which returns its
/// path, and registers it for removal, both under the registry's lock: an
/// interruption never falls between creating and registering (the handler
/// would otherwise finish, and the process die, with the path unregistered).
/// Once emergencyCleanup() began, refuses without calling `create` (kIo,
/// "shutting down"). `create` must be quick and must not call back in here.
Result<std::filesystem::path>
createPath(const std::function<Result<std::filesystem::path>()>& create);
/// Unregisters it (its owner removed it).
void removePath(const std::filesystem::path& path);

/// Renames each registered temporary `first` to its final `second` and
/// unregisters it, all under the registry's lock: once emergencyCleanup()
/// began, nothing is renamed (kIo, "interrupted") so a run cut short never
/// replaces a result. Stops at the first failing rename (kIo naming both).
Status commitPaths(std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames);

/// True once emergencyCleanup() began: failures from then on are its doing,
/// not the compilers' (callers may keep them quiet).
bool cleanupBegan();

/// Stops commits, SIGKILLs the process group of every child a Subprocess
/// owns (later spawns fail), then removes every registered path.
/// Thread-safe; not async-signal-safe (call it from a normal thread).
/// Returns the number of child groups killed.
size_t emergencyCleanup();

} // namespace mlgo::support::shutdown

#endif // MLGO_SUPPORT_SHUTDOWN_H
