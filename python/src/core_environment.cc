//===- python/src/core_environment.cc - the environment behind mlgo_env ---===//
#include "core_environment.h"

#include <atomic>

namespace mlgo::python {

Result<std::unique_ptr<CoreEnvironment>>
CoreEnvironment::create(const env::EnvironmentOptions& options) {
  auto environment = env::Environment::create(options);
  if (!environment.ok())
    return std::move(environment).error();
  return std::unique_ptr<CoreEnvironment>(new CoreEnvironment(std::move(*environment)));
}

namespace {

/// The interrupt checks of one batch: the calling thread asks `stop` (and
/// raises the flag), pool threads read the flag.
class BatchInterrupt {
public:
  explicit BatchInterrupt(const StopCheck& stop)
      : onCaller_([this, &stop] { return raise(stop()); }),
        onPool_([this] { return stopped_.load(std::memory_order_relaxed); }) {}

  const support::InterruptCheck* check(bool onCaller) const {
    return onCaller ? &onCaller_ : &onPool_;
  }
  /// What the caller runs while it waits for the pool.
  void poll(const StopCheck& stop) { raise(stop()); }
  bool stopped() const { return stopped_.load(); }

private:
  bool raise(bool stop) {
    if (stop)
      stopped_ = true;
    return stopped_.load();
  }
  std::atomic<bool> stopped_{false};
  support::InterruptCheck onCaller_;
  support::InterruptCheck onPool_;
};

} // namespace

ResetBatch CoreEnvironment::reset(std::span<const env::ResetRequest> requests,
                                  const StopCheck& stop) {
  ResetBatch batch;
  batch.results.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i)
    batch.results.emplace_back(makeError(ErrorCode::kInternal, "reset did not run"));
  BatchInterrupt interrupt(stop);
  pool_.run(
      requests.size(),
      [&](size_t i, bool onCaller) {
        batch.results[i] = environment_->reset(requests[i], interrupt.check(onCaller));
      },
      [&] { interrupt.poll(stop); }, support::kInterruptSlice);
  batch.interrupted = interrupt.stopped();
  if (batch.interrupted)
    for (auto& result : batch.results)
      if (result.ok() && !result->step.terminated && !result->step.truncated)
        (void)environment_->close(result->episode);
  return batch;
}

StepBatch CoreEnvironment::step(std::span<const env::EpisodeId> episodes,
                                std::span<const env::ActionValue> actions,
                                const StopCheck& stop) {
  const size_t n = episodes.size();
  StepBatch batch;
  batch.results.resize(n);
  batch.statuses.assign(n, Status::success());
  BatchInterrupt interrupt(stop);
  pool_.run(
      n,
      [&](size_t i, bool onCaller) {
        batch.statuses[i] = environment_->step(episodes[i], actions[i], batch.results[i],
                                               interrupt.check(onCaller));
      },
      [&] { interrupt.poll(stop); }, support::kInterruptSlice);
  batch.interrupted = interrupt.stopped();
  if (batch.interrupted)
    for (auto episode : episodes)
      (void)environment_->close(episode);
  return batch;
}

} // namespace mlgo::python
