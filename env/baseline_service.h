//===- env/baseline_service.h - default scores, computed once ---*- C++ -*-===//
///
/// \file
/// Private to env/: hands out the default-heuristic score of a module as a
/// shared future. A score comes from memory, else from the disk cache, else
/// from a plain compile run on a worker thread (holding a job slot) and then
/// stored in both. Concurrent requests for the same module share one
/// compile. A failed compile is never remembered, not even one clang
/// rejected (kCompiler: that may be the OOM killer's SIGKILL): requests
/// waiting on it share its error, and the next request compiles anew.
///
/// Thread-safe. cancel() (and the destructor) kill running compiles and
/// fail queued and later ones at once: every future becomes ready within
/// milliseconds, holding an error (cancelled, or shutting down). The
/// destructor then joins the workers.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_BASELINE_SERVICE_H
#define MLGO_ENV_BASELINE_SERVICE_H

#include "cache_files.h"
#include "compile_plan.h"
#include "job_slots.h"
#include "mlgo/env/baseline_cache.h"
#include "mlgo/env/compiler_driver.h"

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <thread>
#include <unordered_map>

namespace mlgo::env {

using BaselineFuture = std::shared_future<Result<ModuleScore>>;

class BaselineService {
public:
  BaselineService(CompilerDriver& driver, const CompilePlanner& planner, JobSlots& slots,
                  std::optional<BaselineCache> cache, std::string clangVersion,
                  std::chrono::milliseconds timeout, unsigned workers,
                  support::Spawner* spawner = nullptr);
  ~BaselineService();
  BaselineService(const BaselineService&) = delete;
  BaselineService& operator=(const BaselineService&) = delete;

  struct Handle {
    BaselineFuture future;
    bool cached = false; ///< Found in memory or on disk, no compile needed.
  };
  /// The default score of `module` (which must outlive the compile).
  Result<Handle> request(const corpus::ModuleSpec& module);
  /// Kills running compiles and fails every queued and later one (see the
  /// file comment). Idempotent; does not block.
  void cancel();

private:
  Result<std::string> keyFor(const corpus::ModuleSpec& module);
  void run(const corpus::ModuleSpec* module, std::string key,
           std::shared_ptr<std::promise<Result<ModuleScore>>> promise);
  void workerLoop();

  CompilerDriver& driver_;
  const CompilePlanner& planner_;
  JobSlots& slots_;
  std::optional<BaselineCache> cache_;
  std::string clangVersion_;
  std::chrono::milliseconds timeout_;
  support::Spawner* spawner_;

  std::mutex mutex_;
  detail::DigestMemo digests_; ///< Hashes each bitcode file once.
  std::unordered_map<std::string, ModuleScore> known_;
  std::unordered_map<std::string, BaselineFuture> inFlight_;

  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_BASELINE_SERVICE_H
