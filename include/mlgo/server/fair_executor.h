//===- mlgo/server/fair_executor.h - round-robin worker pool ----*- C++ -*-===//
///
/// \file
/// A fixed pool of threads running blocking tasks (environment calls that
/// wait on clang). Tasks are queued per key (one key per connection) and the
/// workers serve the keys round-robin, so one agent flooding the server with
/// resets cannot starve another: each connection gets its turn at the next
/// free worker.
///
/// Two lanes, each with its own threads:
/// - post(): any blocking call (reset, step, close, clean-ups). Such a task
///   may wait for a job slot.
/// - postHolding(): the rest of a step that already holds a job slot (a
///   lone step handed over from the I/O thread, see connection.h); it waits
///   only for its compiler. Its own threads keep it from queueing behind
///   tasks that wait for the very slot it holds: with every worker of the
///   first lane waiting for a slot, the slots' holders would otherwise never
///   run (a deadlock until the compile timeout). One thread per job slot
///   is enough: there are never more holders than slots.
///
/// Thread safety: post(), postHolding() and the destructor may be called
/// from any thread. The destructor runs the tasks already queued, then
/// joins.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_FAIR_EXECUTOR_H
#define MLGO_SERVER_FAIR_EXECUTOR_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mlgo::server {

class FairExecutor {
public:
  /// `threads` for post() (at least one), `holdingThreads` for
  /// postHolding() (0: postHolding() queues on the first lane).
  explicit FairExecutor(unsigned threads, unsigned holdingThreads = 0);
  ~FairExecutor();
  FairExecutor(const FairExecutor&) = delete;
  FairExecutor& operator=(const FairExecutor&) = delete;

  /// Queues `task` under `key`.
  void post(uint64_t key, std::function<void()> task);
  /// Queues a task that holds a job slot (see the file comment).
  void postHolding(uint64_t key, std::function<void()> task);
  /// Tasks waiting (not running), both lanes.
  size_t queued() const;

private:
  /// Threads serving per-key queues round-robin.
  class Lane {
  public:
    explicit Lane(unsigned threads);
    ~Lane();
    void post(uint64_t key, std::function<void()> task);
    size_t queued() const;

  private:
    void work();
    bool takeNext(std::function<void()>& task); ///< Under mutex_.

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::map<uint64_t, std::deque<std::function<void()>>> queues_;
    uint64_t lastKey_ = 0;
    size_t queued_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
  };

  // Holding tasks finish first at destruction (declared last, destroyed
  // first), so none is left behind a blocked first lane.
  Lane lane_;
  std::unique_ptr<Lane> holding_;
};

} // namespace mlgo::server

#endif // MLGO_SERVER_FAIR_EXECUTOR_H
