//===- support/child_wait.h - waiting for a child without reaping it -*- C++ -*-===//
///
/// \file
/// Private to support/: shared by Subprocess::kill() and
/// CleanupScope::cleanup(), which both wait for a SIGKILLed child to die
/// while leaving the reaping (and the exit status) to its owner.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_CHILD_WAIT_H
#define MLGO_SUPPORT_CHILD_WAIT_H

#include "mlgo/support/subprocess.h"

namespace mlgo::support {

/// Blocks until `pid` (a child of ours) has exited, without reaping it.
/// True when it is dead (or already reaped by its owner); false if it
/// outlived `deadline`. Polls every millisecond.
bool waitForDeath(pid_t pid, Deadline deadline);

} // namespace mlgo::support

#endif // MLGO_SUPPORT_CHILD_WAIT_H
