//===- env/optimized_ir_service.h - modules as episodes compile them -*- C++ -*-===//
///
/// \file
/// Private to env/: for problems decided in codegen (Problem::
/// decidesInCodegen), hands episodes the module they compile: its
/// optimised-IR twin, a ModuleSpec whose bitcode is the module's entry in
/// the optimised-IR cache (optimized_ir_cache.h) and whose arguments add
/// `-disable-llvm-optzns`. Interactive and baseline compiles of the twin are
/// planned like any module's, so the default score (and its cache key, which
/// hashes the twin's bitcode and arguments) comes from the same path as the
/// episode's.
///
/// Modules the path does not cover are handed back as they are (compiled in
/// full): ThinLTO modules (the ThinLTO backend runs its own pipeline) and
/// driver (non-cc1) commands.
///
/// On a module's first use in this process prepare() loads and validates its
/// cache entry, or builds it: a plain compile holding a job slot, bounded by
/// the compile timeout, killed by the cancel flag or the caller's interrupt.
/// Later uses cost two stats (the module's `.bc` and the entry's bitcode are
/// still the files seen); anything changed is validated (or built) again.
/// Concurrent prepare() calls for one module share one load or build: the
/// others wait for it and share its error, except kInterrupted (the builder's
/// caller gave up, not the build): then one of them builds in its place.
/// Other processes sharing the directory may build the same entry at the
/// same time; the last rename wins (same bytes).
///
/// A failed build is an error naming the module and the step (kCompiler
/// with clang's output, kTimeout, kInterrupted, ...); it is not remembered,
/// so the next episode tries again. The episode fails with it: falling back
/// to a full compile would hide a module clang cannot compile and mix two
/// paths' baselines. A stopped build (interrupt, cancel flag, timeout)
/// leaves nothing: its compiler is killed and reaped, its directory with the
/// partial output removed, and no cache entry is written (entries appear
/// only by rename once complete, optimized_ir_cache.h).
///
/// Thread-safe. Twins live as long as the service (pointers stay valid).
/// Memory: one small state per module asked about, one twin per module and
/// cache entry (a new one only when a module's bitcode changes on disk).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_OPTIMIZED_IR_SERVICE_H
#define MLGO_ENV_OPTIMIZED_IR_SERVICE_H

#include "cache_files.h"
#include "compile_plan.h"
#include "job_slots.h"
#include "mlgo/env/compiler_driver.h"
#include "mlgo/env/optimized_ir_cache.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace mlgo::env {

class OptimizedIrService {
public:
  /// `limits` supplies the timeout, scope, spawner and cancel flag of the
  /// builds; everything referenced must outlive the service.
  OptimizedIrService(CompilerDriver& driver, const CompilePlanner& planner, JobSlots& slots,
                     OptimizedIrCache cache, std::string clangVersion, const SessionLimits& limits);

  /// Whether `module` is compiled from optimised IR (cc1 arguments, no
  /// ThinLTO index).
  static bool covers(const corpus::ModuleSpec& module);

  struct Prepared {
    /// What to compile: the twin, or `module` itself when not covered.
    const corpus::ModuleSpec* spec = nullptr;
    bool built = false; ///< This call compiled the optimised IR.
  };
  /// The module episodes compile (file comment). Blocks while the entry is
  /// validated or built, here or by another thread: for a job slot, then
  /// the compile, each up to the compile timeout.
  ///
  /// `interrupt` (support/interrupt.h; null = none): the calling thread's
  /// stop request, asked at least every kInterruptSlice while the call
  /// waits for a job slot, the optimising compile or another thread's
  /// build. Once it says yes the call returns kInterrupted (naming the
  /// module) within a slice, its compile killed and reaped, nothing cached.
  /// Not asked while hashing or loading files (bounded by their size).
  Result<Prepared> prepare(const corpus::ModuleSpec& module,
                           support::Interrupt* interrupt = nullptr);

  const OptimizedIrCache& cache() const { return cache_; }

private:
  struct State {
    detail::FileIdentity source;           ///< The module's .bc when resolved.
    std::optional<OptimizedIrEntry> entry; ///< Validated or built.
    const corpus::ModuleSpec* twin = nullptr;
    bool busy = false;           ///< A thread is resolving it.
    uint64_t generation = 0;     ///< Resolutions finished.
    std::optional<Error> failed; ///< Of the last resolution, for its waiters.
  };
  struct Resolved {
    OptimizedIrEntry entry;
    detail::FileIdentity source;
    bool built = false;
  };
  /// With `lock` held: the twin to reuse, null when this call must resolve
  /// the module (no other thread is), or the error of the resolution it
  /// waited for (file comment) or of its interrupt.
  Result<const corpus::ModuleSpec*> awaitTurn(std::unique_lock<std::mutex>& lock, State& state,
                                              const corpus::ModuleSpec& module,
                                              support::Interrupt* interrupt);
  /// Waits, `lock` held, until no thread resolves `state`, asking
  /// `interrupt` between slices with `lock` released.
  Status awaitResolution(std::unique_lock<std::mutex>& lock, const State& state,
                         support::Interrupt* interrupt);
  Result<Resolved> resolve(const corpus::ModuleSpec& module, support::Interrupt* interrupt);
  Result<OptimizedIrEntry> build(const corpus::ModuleSpec& module, const std::string& key,
                                 support::Interrupt* interrupt);
  const corpus::ModuleSpec* twinFor(const corpus::ModuleSpec& module,
                                    const OptimizedIrEntry& entry);

  CompilerDriver& driver_;
  const CompilePlanner& planner_;
  JobSlots& slots_;
  OptimizedIrCache cache_;
  std::string clangVersion_;
  SessionLimits limits_;
  detail::DigestMemo digests_;

  std::mutex mutex_;
  std::condition_variable resolved_;
  std::unordered_map<std::string, State> states_; ///< By module name.
  /// Every twin made (by module name and bitcode path), never freed before
  /// the service.
  std::unordered_map<std::string, std::unique_ptr<const corpus::ModuleSpec>> twins_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_OPTIMIZED_IR_SERVICE_H
