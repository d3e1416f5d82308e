//===- python/src/parallel_for.h - blocking work off the Python thread -*- C++ -*-===//
///
/// \file
/// A small persistent thread pool for the Python core. `run(n, body, poll)`
/// calls body(0..n-1) on pool threads, one thread per index (the pool grows
/// to the largest batch seen, up to kMaxThreads; beyond that indices queue),
/// and returns once every call has finished. While it waits, the calling
/// thread wakes every `pollEvery` and calls `poll()`, which is how the
/// module checks for Ctrl-C with the GIL re-acquired (see module.cc); run()
/// still waits for every body to finish, so `poll` must make them finish
/// (kill their compilers) when it wants to stop early.
///
/// Threads: one run() at a time per ParallelFor (callers serialise; the
/// module does under the GIL). body must not throw. The destructor joins
/// the threads (no run() may be in progress).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_PARALLEL_FOR_H
#define MLGO_PYTHON_PARALLEL_FOR_H

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mlgo::python {

class ParallelFor {
public:
  static constexpr size_t kMaxThreads = 512;

  ParallelFor() = default;
  ~ParallelFor();
  ParallelFor(const ParallelFor&) = delete;
  ParallelFor& operator=(const ParallelFor&) = delete;

  void run(size_t n, const std::function<void(size_t)>& body,
           const std::function<void()>& poll, std::chrono::milliseconds pollEvery);

private:
  void worker();

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* body_ = nullptr;
  size_t next_ = 0;      ///< Next index to hand out.
  size_t total_ = 0;     ///< Indices in the current batch.
  size_t finished_ = 0;  ///< Indices whose body returned.
  bool stopping_ = false;
};

} // namespace mlgo::python

#endif // MLGO_PYTHON_PARALLEL_FOR_H
