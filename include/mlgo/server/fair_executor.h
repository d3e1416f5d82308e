//===- mlgo/server/fair_executor.h - round-robin worker pool ----*- C++ -*-===//
///
/// \file
/// A fixed pool of threads running blocking tasks (environment calls that
/// wait on clang). Tasks are queued per key (one key per connection) and the
/// workers serve the keys round-robin, so one agent flooding the server with
/// resets cannot starve another: each connection gets its turn at the next
/// free worker.
///
/// Thread safety: post() and the destructor may be called from any thread.
/// The destructor runs the tasks already queued, then joins.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_FAIR_EXECUTOR_H
#define MLGO_SERVER_FAIR_EXECUTOR_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace mlgo::server {

class FairExecutor {
public:
  explicit FairExecutor(unsigned threads);
  ~FairExecutor();
  FairExecutor(const FairExecutor&) = delete;
  FairExecutor& operator=(const FairExecutor&) = delete;

  /// Queues `task` under `key`.
  void post(uint64_t key, std::function<void()> task);
  /// Tasks waiting (not running).
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

} // namespace mlgo::server

#endif // MLGO_SERVER_FAIR_EXECUTOR_H
