//===- python/src/core_environment.h - the environment behind mlgo_env -*- C++ -*-===//
///
/// \file
/// What the Python module wraps: one env::Environment plus a ParallelFor so
/// that a batch of resets or steps waits on its compilers concurrently. No
/// Python here: module.cc converts, releases the GIL around these calls and
/// supplies `stop`, which reports a pending Ctrl-C.
///
/// Threads: a lone reset or step (the agent loop's hot path) runs on the
/// calling thread: no hand-off, no wake-up beyond clang's own. A batch runs
/// on the calling thread and pool threads, the caller taking a share
/// (parallel_for.h). One call at a time (the module holds the GIL to start
/// one).
///
/// Interruption, with no thread watching: the calling thread's environment
/// calls get an interrupt check (support/interrupt.h) that asks `stop()`
/// whenever the call has waited kInterruptSlice (50 ms) with nothing
/// arriving; pool threads' calls get one that reads a flag the caller sets
/// when `stop()` says yes (also asked every 50 ms while the caller waits
/// for the pool once its own share is done). So within ~50 ms of Ctrl-C
/// every call of the batch gives up (kInterrupted; its compiler killed and
/// reaped), every episode the batch touched is closed, and the batch's
/// `interrupted` says so.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_CORE_ENVIRONMENT_H
#define MLGO_PYTHON_CORE_ENVIRONMENT_H

#include "parallel_for.h"

#include "mlgo/env/environment.h"

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace mlgo::python {

using StopCheck = std::function<bool()>;

struct ResetBatch {
  std::vector<Result<env::ResetResult>> results;
  bool interrupted = false;
};

struct StepBatch {
  std::vector<env::StepResult> results;
  std::vector<Status> statuses;
  bool interrupted = false;
};

class CoreEnvironment {
public:
  static Result<std::unique_ptr<CoreEnvironment>> create(const env::EnvironmentOptions& options);

  const env::EnvironmentDescription& describe() const { return environment_->describe(); }
  const env::Environment& environment() const { return *environment_; }

  /// Runs every reset concurrently. Blocks (call without the GIL).
  ResetBatch reset(std::span<const env::ResetRequest> requests, const StopCheck& stop);
  /// Steps `episodes[i]` with `actions[i]` concurrently. Blocks.
  StepBatch step(std::span<const env::EpisodeId> episodes,
                 std::span<const env::ActionValue> actions, const StopCheck& stop);
  Status close(env::EpisodeId episode) { return environment_->close(episode); }
  size_t openEpisodes() const { return environment_->openEpisodes(); }

private:
  explicit CoreEnvironment(std::unique_ptr<env::Environment> environment)
      : environment_(std::move(environment)) {}

  // Declared first so that it is destroyed last: pool threads never outlive
  // the environment they call into (no call is in flight at destruction).
  ParallelFor pool_;
  std::unique_ptr<env::Environment> environment_;
};

} // namespace mlgo::python

#endif // MLGO_PYTHON_CORE_ENVIRONMENT_H
