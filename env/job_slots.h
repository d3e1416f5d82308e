//===- env/job_slots.h - a limit on concurrent compiler work ----*- C++ -*-===//
///
/// \file
/// A counting semaphore with deadlines. A slot is held while a compiler is
/// working on the host's behalf (from spawn or an answer until the next
/// decision request, and until exit), never while it waits for an agent:
/// a compiler blocked on its fifo costs no CPU, and holding a slot across
/// agent think time would deadlock an agent that resets more episodes than
/// there are slots before stepping them.
///
/// close() (the environment shutting down) wakes every waiter at once with
/// an error and makes later acquires fail; slots already held stay held
/// until released.
///
/// Thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_JOB_SLOTS_H
#define MLGO_ENV_JOB_SLOTS_H

#include "mlgo/support/interrupt.h"

#include <condition_variable>
#include <mutex>

namespace mlgo::env {

class JobSlots {
public:
  explicit JobSlots(unsigned capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// Holds one slot until destroyed (or release()d).
  class Lease {
  public:
    Lease() = default;
    explicit Lease(JobSlots* slots) : slots_(slots) {}
    Lease(Lease&& other) noexcept : slots_(other.slots_) { other.slots_ = nullptr; }
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        release();
        slots_ = other.slots_;
        other.slots_ = nullptr;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    void release() {
      if (slots_ != nullptr)
        slots_->release();
      slots_ = nullptr;
    }
    bool held() const { return slots_ != nullptr; }

  private:
    JobSlots* slots_ = nullptr;
  };

  /// Waits for a free slot until `deadline` (kTimeout naming the limit), or
  /// until close() (kIo, "shutting down").
  Result<Lease> acquire(support::Deadline deadline) {
    std::unique_lock lock(mutex_);
    if (!freed_.wait_until(lock, deadline, [this] { return closed_ || inUse_ < capacity_; }))
      return makeError(ErrorCode::kTimeout, "no job slot became free in time (all {} busy)",
                       capacity_);
    if (closed_)
      return makeError(ErrorCode::kIo, "no job slot: the environment is shutting down");
    ++inUse_;
    return Lease(this);
  }

  /// Fails every waiting and later acquire(). Idempotent.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    freed_.notify_all();
  }

  unsigned capacity() const { return capacity_; }
  unsigned inUse() const {
    std::lock_guard lock(mutex_);
    return inUse_;
  }

private:
  void release() {
    {
      std::lock_guard lock(mutex_);
      --inUse_;
    }
    freed_.notify_one();
  }

  const unsigned capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  unsigned inUse_ = 0;
  bool closed_ = false;
};

/// slots.acquire(deadline), asking `interrupt` (null = none) at least every
/// kInterruptSlice while it waits, on the calling thread: kInterrupted once
/// it says yes; otherwise as acquire().
inline Result<JobSlots::Lease> acquireInterruptibly(JobSlots& slots, support::Deadline deadline,
                                                    support::Interrupt* interrupt) {
  for (;;) {
    auto lease = slots.acquire(interrupt != nullptr ? interrupt->slice(deadline) : deadline);
    if (lease.ok() || lease.error().code() != ErrorCode::kTimeout ||
        support::Clock::now() >= deadline)
      return lease;
    if (interrupt != nullptr && interrupt->requested())
      return makeError(ErrorCode::kInterrupted, "interrupted while waiting for a job slot");
  }
}

} // namespace mlgo::env

#endif // MLGO_ENV_JOB_SLOTS_H
