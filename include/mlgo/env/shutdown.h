//===- mlgo/env/shutdown.h - cleaning up after an interrupted host -*- C++ -*-===//
///
/// \file
/// What an interrupted mlgo-env (SIGINT, SIGTERM, SIGHUP) must not leave
/// behind: its compilers and its temporary files. A clang in interactive mode
/// whose host vanished does not exit: it busy-spins at 100% CPU on the closed
/// channel forever, in a process group of its own that the terminal's signal
/// never reaches. So every live child (Subprocess) and every temporary path
/// (TempDir, a trace's `.tmp-` files) is registered here, and
/// emergencyCleanup() kills the former and removes the latter.
///
/// Commands that run compilers outside the server (trace, replay --verify,
/// info) call installInterruptHandler() first thing; the server has its own
/// orderly shutdown on the same signals.
///
/// A SIGKILLed host cannot clean up: its interactive compilers then spin
/// until killed (`pkill -f interactive-channel-base` finds them).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_SHUTDOWN_H
#define MLGO_ENV_SHUTDOWN_H

#include <filesystem>
#include <string>

namespace mlgo::env::shutdown {

/// Registers a temporary file or directory to remove on emergencyCleanup().
void addPath(const std::filesystem::path& path);
/// Unregisters it (its owner removed or kept it).
void removePath(const std::filesystem::path& path);

/// SIGKILLs the process group of every child a Subprocess owns, makes later
/// spawns fail, then removes every registered path. Thread-safe (not
/// async-signal-safe: call it from a normal thread). Returns the number of
/// child groups killed.
size_t emergencyCleanup();

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every
/// thread it starts afterwards: call it before starting any) and starts a
/// thread that waits for them. On one it prints "<program>: interrupted
/// (SIGINT); stopped N compilers and removed temporary files" to stderr,
/// runs emergencyCleanup() and exits with 128 + the signal number.
void installInterruptHandler(std::string program);

} // namespace mlgo::env::shutdown

#endif // MLGO_ENV_SHUTDOWN_H
