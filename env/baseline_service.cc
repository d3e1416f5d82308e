//===- env/baseline_service.cc - default scores, computed once -------------===//
#include "baseline_service.h"

namespace mlgo::env {

BaselineService::BaselineService(CompilerDriver& driver, const CompilePlanner& planner,
                                 JobSlots& slots, std::optional<BaselineCache> cache,
                                 std::string clangVersion, std::chrono::milliseconds timeout,
                                 unsigned workers, support::Spawner* spawner)
    : driver_(driver), planner_(planner), slots_(slots), cache_(std::move(cache)),
      clangVersion_(std::move(clangVersion)), timeout_(timeout), spawner_(spawner) {
  for (unsigned i = 0; i < std::max(workers, 1u); ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

BaselineService::~BaselineService() {
  cancel();
  for (std::thread& worker : workers_)
    worker.join();
  // Workers drain the queue before they end; anything left (no worker
  // could start) fails explicitly rather than leave a broken promise.
  for (auto& task : queue_)
    task();
}

void BaselineService::cancel() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

Result<std::string> BaselineService::keyFor(const corpus::ModuleSpec& module) {
  auto digest = digests_.digest(module.bitcodePath);
  if (!digest.ok())
    return digest.error().withContext(fmt::format("module {}", module.name));
  auto args = planner_.baselineKeyArgs(module);
  if (!args.ok())
    return args.error();
  detail::addProfileContents(*args, digests_);
  return baselineKey(*digest, *args, clangVersion_);
}

Result<BaselineService::Handle> BaselineService::request(const corpus::ModuleSpec& module) {
  auto key = keyFor(module);
  if (!key.ok())
    return key.error();
  auto ready = [](Result<ModuleScore> score) {
    std::promise<Result<ModuleScore>> promise;
    promise.set_value(std::move(score));
    return Handle{promise.get_future().share(), true};
  };
  {
    std::lock_guard lock(mutex_);
    if (auto it = known_.find(*key); it != known_.end())
      return ready(it->second);
    if (auto it = inFlight_.find(*key); it != inFlight_.end())
      return Handle{it->second, false};
  }
  std::optional<ModuleScore> stored = cache_ ? cache_->load(*key) : std::nullopt;
  std::lock_guard lock(mutex_);
  if (stored) {
    known_.emplace(*key, *stored);
    return ready(std::move(*stored));
  }
  if (auto it = inFlight_.find(*key); it != inFlight_.end())
    return Handle{it->second, false};
  if (stopping_) // No worker would run it.
    return makeError(ErrorCode::kIo, "default compile of module {}: shutting down", module.name);
  auto promise = std::make_shared<std::promise<Result<ModuleScore>>>();
  BaselineFuture future = promise->get_future().share();
  inFlight_.emplace(*key, future);
  queue_.push_back([this, m = &module, k = *key, promise] { run(m, k, promise); });
  wake_.notify_one();
  return Handle{future, false};
}

void BaselineService::run(const corpus::ModuleSpec* module, std::string key,
                          std::shared_ptr<std::promise<Result<ModuleScore>>> promise) {
  auto compute = [&]() -> Result<ModuleScore> {
    if (stopping_)
      return makeError(ErrorCode::kInternal, "the environment is shutting down");
    auto lease = slots_.acquire(support::Clock::now() + timeout_);
    if (!lease.ok())
      return lease.error();
    auto planned = planner_.baseline(*module);
    if (!planned.ok())
      return planned.error();
    // On a worker thread, shared by episodes: only shutdown stops it.
    auto report = driver_.runPlain(planner_.scope(), planned->command, timeout_, &stopping_,
                                   spawner_, /*interrupt=*/nullptr);
    if (!report.ok())
      return report.error();
    return driver_.score(planner_.scoreKind(), planned->command);
  };
  Result<ModuleScore> result = compute();
  if (!result.ok())
    result = result.error().withContext(fmt::format("default compile of module {}", module->name));
  else if (cache_)
    (void)cache_->store(key, *result); // A failed write only costs a recompile.
  {
    std::lock_guard lock(mutex_);
    // A failure is never remembered: it may be passing (clang killed by the
    // OOM killer, a timeout under load), so the next episode compiles anew.
    // Episodes already waiting on this compile share its result.
    if (result.ok())
      known_.emplace(key, *result);
    inFlight_.erase(key);
  }
  promise->set_value(std::move(result));
}

void BaselineService::workerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Stopping, queued tasks still run: each fails at once ("shutting
      // down"), so no episode waits on a promise nobody will keep.
      if (queue_.empty())
        return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

} // namespace mlgo::env
