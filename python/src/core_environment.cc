//===- python/src/core_environment.cc - the environment behind mlgo_env ---===//
#include "core_environment.h"

#include <atomic>
#include <csignal>

namespace mlgo::python {

namespace {
constexpr std::chrono::milliseconds kPollEvery{50};
} // namespace

Result<std::unique_ptr<CoreEnvironment>>
CoreEnvironment::create(const env::EnvironmentOptions& options) {
  auto environment = env::Environment::create(options);
  if (!environment.ok())
    return std::move(environment).error();
  return std::unique_ptr<CoreEnvironment>(new CoreEnvironment(std::move(*environment)));
}

ResetBatch CoreEnvironment::reset(std::span<const env::ResetRequest> requests,
                                  const StopCheck& stop) {
  ResetBatch batch;
  batch.results.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i)
    batch.results.emplace_back(makeError(ErrorCode::kInternal, "reset did not run"));
  pool_.run(
      requests.size(), [&](size_t i) { batch.results[i] = environment_->reset(requests[i]); },
      [&] { batch.interrupted = batch.interrupted || stop(); }, kPollEvery);
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
  std::vector<std::atomic<pid_t>> pids(n);
  std::vector<std::atomic<bool>> running(n);
  auto body = [&](size_t i) {
    pids[i] = environment_->compilerPid(episodes[i]).value_or(0);
    running[i] = true;
    batch.statuses[i] = environment_->step(episodes[i], actions[i], batch.results[i]);
    running[i] = false;
  };
  auto poll = [&] {
    if (batch.interrupted || !stop())
      return;
    batch.interrupted = true;
    for (size_t i = 0; i < n; ++i)
      if (running[i] && pids[i] > 0)
        ::kill(pids[i], SIGKILL);
  };
  pool_.run(n, body, poll, kPollEvery);
  if (batch.interrupted)
    for (auto episode : episodes)
      (void)environment_->close(episode);
  return batch;
}

} // namespace mlgo::python
