//===- env/environment_impl.h - what an Environment holds -------*- C++ -*-===//
///
/// \file
/// Private to env/: the state behind an Environment. environment_create.cc
/// builds it (Environment::create: options check, compiler probe,
/// construction); environment.cc runs its episodes.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_ENVIRONMENT_IMPL_H
#define MLGO_ENV_ENVIRONMENT_IMPL_H

#include "episode.h"
#include "mlgo/env/clang_probe.h"
#include "mlgo/env/compiler_driver.h"
#include "mlgo/env/environment.h"
#include "mlgo/ir2vec/embedder.h"
#include "mlgo/ir2vec/vocabulary.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/spawn.h"
#include "mlgo/support/temp_dir.h"

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace mlgo::env {

struct Environment::Impl {
  // First member: destroyed last, after everything registered in it.
  std::shared_ptr<support::CleanupScope> scope;
  // Destroyed after every compiler it started is gone (its children die
  // with its thread).
  support::Spawner spawner;
  EnvironmentOptions options;
  std::shared_ptr<CompilerDriver> driver; ///< options.driver or the real one.
  const Problem* problem = nullptr;
  std::optional<corpus::Corpus> corpus;
  ClangVersion clang;
  EnvironmentDescription description;
  /// With --no-disk-cache: where the optimised IR goes (removed last).
  support::TempDir optimizedIrDir;
  std::unique_ptr<CompilePlanner> planner;
  std::unique_ptr<JobSlots> slots;
  /// Null: full compiles. Declared before `baselines`, whose worker may
  /// still be compiling one of its modules (a "twin" it owns) until the
  /// service is destroyed.
  std::unique_ptr<OptimizedIrService> optimizedIr;
  std::unique_ptr<BaselineService> baselines;
  EpisodeContext context;

  std::mutex samplerMutex;
  std::unique_ptr<corpus::Sampler> sampler;
  std::unordered_set<size_t> withoutDecisions; ///< Sampled modules clang asks nothing about.

  // Module embeddings (with an IR2Vec vocabulary): one computation per
  // module, started on its first reset and run while clang starts up.
  using Embedding = Result<std::shared_ptr<const std::vector<double>>>;
  std::optional<ir2vec::Embedder> embedder;
  std::mutex embeddingMutex;
  std::unordered_map<size_t, std::shared_future<Embedding>> embeddings;

  mutable std::mutex mutex;
  std::atomic<bool> stopping{false}; ///< shutdown() was called.
  std::atomic<size_t> reserved{0};   ///< Open episodes plus resets in progress.
  EpisodeId nextId = 1;
  // Last member: destroyed first, so compilers die before the services go.
  std::unordered_map<EpisodeId, std::shared_ptr<Episode>> episodes;

  // --- Construction (environment_create.cc). create() sets `options`,
  // `scope` and `driver`, then runs the three steps in order; the first
  // error ends it.

  /// What the steps settle on the way and hand to the next one.
  struct Settings {
    /// options.problemOptions, plus what the vocabulary and the compiler add.
    ProblemOptions problemOptions;
    std::optional<ir2vec::Vocabulary> vocabulary;
    /// options.fixedPriorities, read.
    std::shared_ptr<const FixedPriorities> priorities;
    std::filesystem::path clangPath;
    /// The problem bound to the header the probe saw.
    std::shared_ptr<const BoundProblem> bound;
  };
  /// No compiler runs: the problem, the IR2Vec vocabulary (a bad file is
  /// reported before clang is probed), the corpus and its commands.
  Status checkOptions(Settings& settings);
  Status loadVocabulary(Settings& settings);
  /// clang's version, its LLVM options (regalloc), the problem's probe, and
  /// the problem bound to the header it sent.
  Status probeCompiler(Settings& settings);
  /// The baseline cache, sampler, job slots, services, the episodes'
  /// context and the description.
  Status construct(const Settings& settings);
  /// Opens the optimised-IR cache (in `<cacheDir>/optimized-ir`, or a
  /// temporary directory without a disk cache) and its service.
  Status startOptimizedIr(const std::optional<std::filesystem::path>& cacheDir);
  void describeEnvironment(const Settings& settings, const BaselineCache* cache, unsigned jobs);

  // --- Episodes (environment.cc).

  Result<std::shared_ptr<Episode>> find(EpisodeId id) const;
  /// Runs `call` on an open episode under its lock; forgets the episode
  /// if the call ended it. kNotFound when it is not open.
  template <typename Call>
  auto onEpisode(EpisodeId id, Call&& call) -> decltype(call(std::declval<Episode&>()));
  Result<size_t> sample(std::optional<uint64_t> seed);
  Result<ResetResult> startOn(size_t moduleIndex, const EpisodeOptions& episodeOptions,
                              const support::InterruptCheck* stop);
  Result<std::shared_future<Embedding>> moduleEmbedding(size_t moduleIndex);
  void forgetEmbedding(size_t moduleIndex);
};

} // namespace mlgo::env

#endif // MLGO_ENV_ENVIRONMENT_IMPL_H
