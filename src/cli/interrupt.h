//===- src/cli/interrupt.h - Ctrl-C for commands that run compilers -*- C++ -*-===//
///
/// \file
/// While an InterruptGuard lives, SIGINT, SIGTERM and SIGHUP stop the
/// process cleanly: its compilers are killed and its temporary files removed
/// (support::shutdown::emergencyCleanup), a line on stderr says so, and the
/// process then dies of the same signal (so a shell loop around mlgo-env
/// sees the interruption). Without it, a clang whose host died spins at
/// 100% CPU forever (see mlgo/support/shutdown.h).
///
/// Used by trace, replay --verify and info for their whole run, and by the
/// server while it starts (the capability probe runs clang); the server then
/// replaces it with its own signal set and orderly shutdown. Signals are
/// taken through an asio::signal_set on a thread of the guard's own.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_INTERRUPT_H
#define MLGO_CLI_INTERRUPT_H

#include <memory>
#include <string>

namespace mlgo::cli {

class InterruptGuard {
public:
  /// `program` prefixes the message ("mlgo-env trace").
  explicit InterruptGuard(std::string program);
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
