//===- python/src/parallel_for.h - blocking work off the Python thread -*- C++ -*-===//
///
/// \file
/// A small persistent thread pool for the Python core. `run(n, body, poll)`
/// calls body(0..n-1), one thread per index: the calling thread takes
/// indices itself and pool threads take the others (the pool grows to the
/// largest batch seen minus one, up to kMaxThreads; beyond that indices
/// queue). So run(1, ...) never leaves the calling thread: a lone call
/// costs no hand-off (two cross-thread wake-ups, ~25-30 us each on a 2-core
/// VM) and no pool thread is ever started for it.
///
/// run() returns once every call has finished. Once the calling thread has
/// no index left to run, it waits for the others, waking every `pollEvery`
/// to call `poll()` (how the module checks for Ctrl-C with the GIL
/// re-acquired, see module.cc); `poll` must make the bodies finish when it
/// wants to stop early. While the calling thread runs a body, nobody calls
/// poll(): a body that may wait long checks for itself (`onCaller` tells it
/// whether it runs on the calling thread; CoreEnvironment hands that body
/// the interrupt check).
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

  /// body(index, onCaller).
  using Body = std::function<void(size_t, bool)>;
  void run(size_t n, const Body& body, const std::function<void()>& poll,
           std::chrono::milliseconds pollEvery);

private:
  void worker();

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;
  const Body* body_ = nullptr;
  size_t next_ = 0;      ///< Next index to hand out.
  size_t total_ = 0;     ///< Indices in the current batch.
  size_t finished_ = 0;  ///< Indices whose body returned.
  bool stopping_ = false;
};

} // namespace mlgo::python

#endif // MLGO_PYTHON_PARALLEL_FOR_H
