//===- ir2vec/parallel.h - a minimal parallel loop --------------*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: runs `count` independent tasks on up to `jobs`
/// std::threads and reports the failure with the lowest index, so the error
/// a caller sees does not depend on scheduling.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_PARALLEL_H
#define MLGO_IR2VEC_PARALLEL_H

#include "mlgo/support/result.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace mlgo::ir2vec::detail {

/// Worker count for a request of `jobs` (0 = hardware threads), at most `count`.
inline unsigned workerCount(unsigned jobs, size_t count) {
  unsigned n = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<size_t>(count, 1, n));
}

/// Calls task(i) for every i < count. After the first failure, tasks not yet
/// started are skipped. Returns the failure with the lowest index, if any.
inline Status parallelFor(size_t count, unsigned jobs, const std::function<Status(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::optional<Error>> errors(count);
  auto worker = [&] {
    for (size_t i = next++; i < count && !failed; i = next++) {
      Status status = task(i);
      if (!status) {
        errors[i] = status.error();
        failed = true;
      }
    }
  };
  unsigned workers = workerCount(jobs, count);
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break; // No more threads available: run with fewer.
    }
  }
  worker();
  for (std::thread& t : threads)
    t.join();
  for (auto& error : errors)
    if (error)
      return std::move(*error);
  return Status::success();
}

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_PARALLEL_H
