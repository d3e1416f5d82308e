//===- env/episode.h - one compile answered by an agent ---------*- C++ -*-===//
///
/// \file
/// Private to env/: the state machine of one episode (see environment.h for
/// the contract). Not thread-safe by itself: the Environment serialises
/// calls with mutex().
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_EPISODE_H
#define MLGO_ENV_EPISODE_H

#include "baseline_service.h"
#include "compile_plan.h"
#include "job_slots.h"
#include "mlgo/env/compiler_driver.h"
#include "mlgo/env/environment.h"
#include "optimized_ir_service.h"

#include <mutex>

namespace mlgo::env {

/// What every episode of an Environment shares.
struct EpisodeContext {
  const Problem* problem = nullptr;
  const CompilePlanner* planner = nullptr;
  JobSlots* slots = nullptr;
  BaselineService* baselines = nullptr;
  CompilerDriver* driver = nullptr;
  /// The problem bound to the header the probe saw; every episode's header
  /// must equal it (its specs are what describe() promised).
  std::shared_ptr<const BoundProblem> bound;
  SessionLimits limits;
  /// Set for problems decided in codegen unless full compiles were asked
  /// for: episodes compile the module's optimised IR.
  OptimizedIrService* optimizedIr = nullptr;
};

class Episode {
public:
  Episode(EpisodeId id, const corpus::ModuleSpec& module, EpisodeOptions options,
          const EpisodeContext& context)
      : id_(id), module_(&module), options_(options), context_(&context) {}

  /// Starts clang and waits for its first decision request. The error
  /// names the episode and module.
  ///
  /// `stop` (start, step, finishStep): the caller's interrupt check for
  /// this call (support/interrupt.h), asked at least every
  /// kInterruptSlice while the call waits (for a job slot, the compiler,
  /// the baseline, or in start() the module's optimised-IR build); a yes
  /// ends the episode with kInterrupted. Null = none.
  Status start(StepResult& result, const support::InterruptCheck* stop = nullptr);
  /// Validates and sends `action`, then waits for the next request or the
  /// end. On kInvalidArgument nothing happened; on any other error the
  /// episode is over, its compiler killed and its directory removed; that
  /// includes kTimeout "no job slot became free in time" (no free job slot
  /// within the compile timeout).
  Status step(const ActionValue& action, StepResult& result,
              const support::InterruptCheck* stop = nullptr);
  /// The non-blocking halves of step() (Environment::beginStep):
  /// beginStep() sends `action` only if nothing on the way may wait (a job
  /// slot free now, no truncation due, a session with a streamFd); it then
  /// holds the slot until the request comes back. kMustBlock from
  /// beginStep() means nothing happened; from pollStep() it means the rest
  /// (the compile ending, or a stream that dried up) must go to
  /// finishStep(). Errors as step().
  Result<StepProgress> beginStep(const ActionValue& action, int& fd);
  Result<StepProgress> pollStep(StepResult& result);
  Status finishStep(StepResult& result, const support::InterruptCheck* stop = nullptr);
  /// Kills the compiler; the episode is over.
  void close();

  /// True once terminated, truncated, failed or closed.
  bool over() const { return over_; }
  EpisodeId id() const { return id_; }
  const corpus::ModuleSpec& module() const { return *module_; }
  std::optional<pid_t> pid() const;
  std::mutex& mutex() { return mutex_; }

private:
  /// Waits for clang's next request: answers it from the prefix while any
  /// is left, else presents it (or completes the episode at the end).
  Status advance(StepResult& result, JobSlots::Lease& lease);
  /// The session's next event for the agent: priority questions (channel
  /// 1, with fixed priorities) are answered here on the way.
  Result<SessionEvent> nextForAgent();
  /// Answers the current request with options_.actions[prefixSteps_].
  Status answerFromPrefix();
  /// The compiler asked for its next decision: show it to the agent.
  Status present(StepResult& result, JobSlots::Lease& lease);
  Status validateAndEncode(const ActionValue& action);
  Status runFallback(JobSlots::Lease& lease);
  Status complete(StepResult& result, JobSlots::Lease& lease, bool truncated);
  Status checkHeader();
  void fillObservation(StepResult& result) const;
  Status fail(const Error& error);
  /// A job slot by `deadline`, asking interrupt_ while it waits.
  Result<JobSlots::Lease> acquireSlot(support::Deadline deadline);
  /// The baseline's score, asking interrupt_ while it waits.
  Result<const Result<ModuleScore>*> awaitBaseline();

  EpisodeId id_;
  const corpus::ModuleSpec* module_;
  EpisodeOptions options_;
  const EpisodeContext* context_;
  std::mutex mutex_;

  std::unique_ptr<CompilerSession> session_;
  BaselineService::Handle baseline_;
  Observation current_;
  bool pending_ = false;
  bool headerChecked_ = false;
  bool over_ = false;
  /// Between beginStep() and the step's end: the action reached the
  /// compiler, which works on `inFlightLease_`.
  bool inFlight_ = false;
  JobSlots::Lease inFlightLease_;
  uint64_t agentSteps_ = 0;
  uint64_t fallbackSteps_ = 0;
  /// Decisions answered from options_.actions so far.
  uint64_t prefixSteps_ = 0;
  std::vector<std::byte> advice_;
  /// With fixed priorities for this module: answers clang's priority channel.
  std::optional<PriorityAnswerer> priorities_;
  /// The check of the call in progress; the session asks it too (its
  /// SessionLimits::interrupt points here).
  support::Interrupt interrupt_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_EPISODE_H
