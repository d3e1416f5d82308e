//===- src/cli/interrupt.h - Ctrl-C for commands that run compilers -*- C++ -*-===//
///
/// \file
/// While an InterruptGuard lives, SIGINT, SIGTERM and SIGHUP stop the
/// process cleanly: the compilers of the run's cleanup scope are killed and
/// its temporary files removed (support::CleanupScope::cleanup), a line on
/// stderr says so, and the process then dies of the same signal (so a shell
/// loop around mlgo-env sees the interruption). Without it, a clang whose
/// host died spins at 100% CPU forever (see mlgo/support/cleanup_scope.h).
///
/// The command creates the scope, hands it to the guard and down to what it
/// runs (EnvironmentOptions::cleanup and the like); the scope must outlive
/// the guard.
///
/// Used by trace, replay --verify and info for their whole run, and by the
/// server while it starts (the capability probe runs clang); the server then
/// replaces it with its own signal set and orderly shutdown. Signals are
/// taken through an asio::signal_set on a thread of the guard's own.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_INTERRUPT_H
#define MLGO_CLI_INTERRUPT_H

#include "mlgo/support/cleanup_scope.h"

#include <memory>
#include <string>

namespace mlgo::cli {

class InterruptGuard {
public:
  /// `program` prefixes the message ("mlgo-env trace"); a signal cleans up
  /// `scope`.
  InterruptGuard(std::string program, support::CleanupScope& scope);
  /// Stops watching; the signals get their default action back.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::cli

#endif // MLGO_CLI_INTERRUPT_H
