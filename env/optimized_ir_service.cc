//===- env/optimized_ir_service.cc - modules as episodes compile them -----===//
#include "optimized_ir_service.h"

namespace mlgo::env {

OptimizedIrService::OptimizedIrService(CompilerDriver& driver, const CompilePlanner& planner,
                                       JobSlots& slots, OptimizedIrCache cache,
                                       std::string clangVersion, const SessionLimits& limits)
    : driver_(driver), planner_(planner), slots_(slots), cache_(std::move(cache)),
      clangVersion_(std::move(clangVersion)), limits_(limits) {}

bool OptimizedIrService::covers(const corpus::ModuleSpec& module) {
  return !module.thinLtoIndexPath && !module.args.empty() && module.args.front() == "-cc1";
}

Result<OptimizedIrService::Prepared> OptimizedIrService::prepare(const corpus::ModuleSpec& module,
                                                                 support::Interrupt* interrupt) {
  if (!covers(module))
    return Prepared{&module, false};
  std::unique_lock lock(mutex_);
  State& state = states_[module.name]; // Node-based: stays put.
  auto turn = awaitTurn(lock, state, module, interrupt);
  if (!turn.ok())
    return turn.error();
  if (*turn != nullptr)
    return Prepared{*turn, false};
  state.busy = true;
  lock.unlock();
  Result<Resolved> resolved = resolve(module, interrupt);
  lock.lock();
  state.busy = false;
  ++state.generation;
  resolved_.notify_all();
  if (!resolved.ok()) {
    state.entry.reset(); // Not remembered: the next call tries again.
    state.failed = resolved.error();
    return resolved.error();
  }
  state.failed.reset();
  state.source = resolved->source;
  state.entry = resolved->entry;
  state.twin = twinFor(module, resolved->entry);
  return Prepared{state.twin, resolved->built};
}

Result<const corpus::ModuleSpec*> OptimizedIrService::awaitTurn(std::unique_lock<std::mutex>& lock,
                                                                State& state,
                                                                const corpus::ModuleSpec& module,
                                                                support::Interrupt* interrupt) {
  std::optional<uint64_t> waitedFor;
  for (;;) {
    // The resolution we waited for failed: share it, unless its own caller
    // interrupted it (then this call resolves the module itself).
    if (waitedFor && state.generation != *waitedFor && state.failed &&
        state.failed->code() != ErrorCode::kInterrupted)
      return *state.failed;
    if (!state.busy && state.entry) {
      // Two stats, unlocked: the module's .bc and the entry are still the
      // files seen when it was resolved.
      detail::FileIdentity seenSource = state.source;
      OptimizedIrEntry seen = *state.entry;
      const corpus::ModuleSpec* twin = state.twin;
      uint64_t generation = state.generation;
      lock.unlock();
      auto source = detail::identityOf(module.bitcodePath);
      bool same = source.ok() && *source == seenSource && OptimizedIrCache::unchanged(seen);
      lock.lock();
      if (state.generation != generation)
        continue; // Resolved again meanwhile: look at that.
      if (same && !state.busy)
        return twin;
    }
    if (!state.busy)
      return nullptr; // This call resolves it.
    waitedFor = state.generation;
    if (Status st = awaitResolution(lock, state, interrupt); !st.ok())
      return st.error().withContext(fmt::format("module {}: optimising its IR", module.name));
  }
}

Status OptimizedIrService::awaitResolution(std::unique_lock<std::mutex>& lock, const State& state,
                                           support::Interrupt* interrupt) {
  auto done = [&] { return !state.busy; };
  if (interrupt == nullptr || !interrupt->armed()) {
    resolved_.wait(lock, done);
    return Status::success();
  }
  while (!resolved_.wait_for(lock, support::kInterruptSlice, done)) {
    lock.unlock(); // The caller's check may block (the Python core's takes the GIL).
    bool stop = interrupt->requested();
    lock.lock();
    if (stop)
      return makeError(ErrorCode::kInterrupted,
                       "interrupted while waiting for another episode's build");
  }
  return Status::success();
}

Result<OptimizedIrService::Resolved> OptimizedIrService::resolve(const corpus::ModuleSpec& module,
                                                                 support::Interrupt* interrupt) {
  // The identity first: a .bc replaced while it is hashed is seen next time.
  auto source = detail::identityOf(module.bitcodePath);
  if (!source.ok())
    return source.error().withContext(fmt::format("module {}", module.name));
  auto digest = digests_.digest(module.bitcodePath);
  if (!digest.ok())
    return digest.error().withContext(fmt::format("module {}", module.name));
  auto args = planner_.optimizationKeyArgs(module);
  if (!args.ok())
    return args.error();
  detail::addProfileContents(*args, digests_);
  std::string key = optimizedIrKey(*digest, *args, clangVersion_);
  auto loaded = cache_.load(key);
  if (loaded.ok())
    return Resolved{std::move(*loaded), *source, false};
  // Absent, or present and not what its record says: (re)build it.
  auto built = build(module, key, interrupt);
  if (!built.ok())
    return built.error();
  return Resolved{std::move(*built), *source, true};
}

Result<OptimizedIrEntry> OptimizedIrService::build(const corpus::ModuleSpec& module,
                                                   const std::string& key,
                                                   support::Interrupt* interrupt) {
  auto context = [&](const Error& error) {
    return error.withContext(fmt::format("module {}: optimising its IR", module.name));
  };
  if (limits_.cancel != nullptr && limits_.cancel->load())
    return context(makeError(ErrorCode::kIo, "the environment is shutting down"));
  auto lease =
      acquireInterruptibly(slots_, support::Clock::now() + limits_.compileTimeout, interrupt);
  if (!lease.ok())
    return context(lease.error());
  auto planned = planner_.optimization(module);
  if (!planned.ok())
    return context(planned.error());
  // Stopped (interrupt, cancel, timeout): the compile is killed and reaped
  // and its directory goes with `planned`; store() never ran, so no entry.
  auto report = driver_.runPlain(*limits_.scope, planned->command, limits_.compileTimeout,
                                 limits_.cancel, limits_.spawner, interrupt);
  if (!report.ok())
    return context(report.error());
  lease->release();
  auto stored = cache_.store(key, planned->command.objectPath, module.name);
  if (!stored.ok())
    return context(stored.error());
  return stored;
}

const corpus::ModuleSpec* OptimizedIrService::twinFor(const corpus::ModuleSpec& module,
                                                      const OptimizedIrEntry& entry) {
  std::string id = module.name + '\0' + entry.bitcode.string();
  auto& twin = twins_[id];
  if (!twin) {
    auto made = std::make_unique<corpus::ModuleSpec>(module);
    made->bitcodePath = entry.bitcode;
    made->args.push_back("-disable-llvm-optzns");
    made->thinLtoIndexPath.reset();
    twin = std::move(made);
  }
  return twin.get();
}

} // namespace mlgo::env
