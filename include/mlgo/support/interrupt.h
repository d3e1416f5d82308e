//===- mlgo/support/interrupt.h - stopping a blocking call early -*- C++ -*-===//
///
/// \file
/// A caller's way to stop one blocking call early without a thread of its
/// own watching: the Python core runs a lone reset or step on the calling
/// thread and must still answer Ctrl-C within milliseconds.
///
/// The caller installs a check (InterruptScope) for the duration of one
/// call. Every wait of that call then waits in slices of at most
/// kInterruptSlice and asks the check between slices; once the check says
/// yes, the call gives up with ErrorCode::kInterrupted (an episode fails as
/// it would for any other error: its compiler is killed and reaped).
///
/// Cost: nothing while what is waited for arrives within a slice (a poll()
/// returns as soon as its descriptor is readable; no extra wake-up, no
/// thread hop); one call of the check per idle slice otherwise.
///
/// Threads: one thread uses an Interrupt at a time (install, ask, clear):
/// the owner serialises calls, e.g. an episode's mutex. The check runs on
/// that thread, inside the wait (the Python core's check takes the GIL).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_INTERRUPT_H
#define MLGO_SUPPORT_INTERRUPT_H

#include "mlgo/support/subprocess.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace mlgo::support {

/// The longest a wait goes without asking an installed check.
inline constexpr std::chrono::milliseconds kInterruptSlice{50};

/// Returns true when the caller wants the call to stop.
using InterruptCheck = std::function<bool()>;

class Interrupt {
public:
  /// Whether a check is installed (waits then slice).
  bool armed() const { return check_ != nullptr && *check_; }

  /// Asks the installed check; once it said yes, stays yes until the next
  /// install(). False when none is installed.
  bool requested() {
    if (!latched_ && armed())
      latched_ = (*check_)();
    return latched_;
  }

  /// `until`, or the end of the next slice when armed, whichever is first.
  Deadline slice(Deadline until) const {
    return armed() ? std::min(until, Clock::now() + kInterruptSlice) : until;
  }

  /// `check` (which must outlive the installation; null = none) is asked
  /// from now on.
  void install(const InterruptCheck* check) {
    check_ = check;
    latched_ = false;
  }

private:
  const InterruptCheck* check_ = nullptr;
  bool latched_ = false;
};

/// Installs a check on an Interrupt for one scope.
class InterruptScope {
public:
  InterruptScope(Interrupt& interrupt, const InterruptCheck* check) : interrupt_(interrupt) {
    interrupt_.install(check);
  }
  ~InterruptScope() { interrupt_.install(nullptr); }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

private:
  Interrupt& interrupt_;
};

} // namespace mlgo::support

#endif // MLGO_SUPPORT_INTERRUPT_H
