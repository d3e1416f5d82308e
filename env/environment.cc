//===- env/environment.cc - the gym-style environment ----------------------===//
#include "mlgo/env/environment.h"

#include "episode.h"
#include "mlgo/corpus/command_check.h"
#include "mlgo/env/clang_probe.h"
#include "mlgo/env/compiler_driver.h"
#include "mlgo/ir2vec/embedder.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/spawn.h"

#include <atomic>
#include <future>
#include <system_error>
#include <thread>
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

  Result<std::shared_ptr<Episode>> find(EpisodeId id) const;
  /// Runs `call` on an open episode under its lock; forgets the episode
  /// if the call ended it. kNotFound when it is not open.
  template <typename Call>
  auto onEpisode(EpisodeId id, Call&& call) -> decltype(call(std::declval<Episode&>()));
  Result<size_t> sample(std::optional<uint64_t> seed);
  Result<ResetResult> startOn(size_t moduleIndex, const EpisodeOptions& episodeOptions,
                              const support::InterruptCheck* stop);
  Result<std::shared_future<Embedding>> moduleEmbedding(size_t moduleIndex);
  /// Opens the optimised-IR cache (in `<cacheDir>/optimized-ir`, or a
  /// temporary directory without a disk cache) and its service.
  Status startOptimizedIr(const std::optional<std::filesystem::path>& cacheDir);
  void forgetEmbedding(size_t moduleIndex);
};

namespace {

Result<std::filesystem::path> corpusDir(const EnvironmentOptions& options, const Problem& problem) {
  if (!options.corpus.empty())
    return options.corpus;
  return corpus::defaultDemoCorpusDir(problem.demoCorpusVariant());
}

EnvironmentDescription describeProblem(const Problem& problem, const BoundProblem& bound) {
  EnvironmentDescription d;
  d.problem = std::string(problem.name());
  d.summary = std::string(problem.summary());
  size_t offset = 0;
  for (size_t i : bound.visibleFeatures()) {
    d.observationSpecs.push_back(bound.header().features[i]);
    d.observationOffsets.push_back(offset);
    offset += bound.header().features[i].byteSize();
  }
  d.actionSpec = bound.actionSpec();
  d.actionRule = bound.actionRule();
  d.defaultActionSource = bound.defaultDecisionSource();
  d.rewardDefinition = problem.rewardDefinition();
  return d;
}

} // namespace

Result<std::unique_ptr<Environment>> Environment::create(const EnvironmentOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->scope = options.cleanup ? options.cleanup : std::make_shared<support::CleanupScope>();
  support::CleanupScope& scope = *impl->scope;
  impl->driver = options.driver ? options.driver : processCompilerDriver();
  CompilerDriver& driver = *impl->driver;
  auto problem = findProblem(options.problem);
  if (!problem.ok())
    return problem.error();
  impl->problem = *problem;

  // The vocabulary first: a bad file is reported before clang is probed.
  ProblemOptions problemOptions = options.problemOptions;
  std::optional<ir2vec::Vocabulary> vocabulary;
  if (!options.ir2vecVocabulary.empty()) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(options.ir2vecVocabulary, ec);
    if (ec)
      return makeError(ErrorCode::kIo, "IR2Vec vocabulary {}: {}",
                       options.ir2vecVocabulary.string(), ec.message());
    auto loaded = ir2vec::Vocabulary::load(absolute);
    if (!loaded.ok())
      return std::move(loaded).error().withContext("IR2Vec vocabulary");
    auto embedder = ir2vec::Embedder::create(*loaded);
    if (!embedder.ok())
      return embedder.error();
    impl->embedder.emplace(std::move(*embedder));
    problemOptions.ir2vecVocabulary = absolute.lexically_normal();
    problemOptions.ir2vecDimension = loaded->dimension();
    vocabulary.emplace(std::move(*loaded));
  }

  auto dir = corpusDir(options, **problem);
  if (!dir.ok())
    return dir.error();
  auto corpus = corpus::Corpus::open(*dir);
  if (!corpus.ok())
    return corpus.error();
  impl->corpus.emplace(std::move(*corpus));
  // Every module's command, once, before any clang runs (command_check.h).
  if (auto checked = corpus::checkCorpusCommands(*impl->corpus, options.flagRules); !checked.ok())
    return checked.error().withContext(fmt::format("corpus {}", impl->corpus->root().string()));

  std::filesystem::path clangPath = options.clang.empty() ? "clang-22" : options.clang;
  // Directories left by hosts that died without cleaning up (SIGKILL, a
  // crash) go before we add ours.
  support::TempDir::reapOrphans(options.tempDir);
  auto clang = driver.version(scope, clangPath, std::chrono::seconds(30));
  if (!clang.ok())
    return clang.error();
  impl->clang = std::move(*clang);
  if ((*problem)->name() == "regalloc") {
    // clang's own default eviction decision, when this clang can send it.
    auto llvmOptions =
        driver.llvmOptions(scope, clangPath, options.compileTimeout, options.tempDir);
    if (!llvmOptions.ok())
      return llvmOptions.error();
    problemOptions.regallocClangDefault = offersRegallocIncludeDefault(*llvmOptions);
  }
  auto probe = driver.probe(scope, clangPath, **problem, problemOptions, options.compileTimeout,
                            options.tempDir);
  if (!probe.ok())
    return probe.error();
  auto bound = (*problem)->bind(probe->header, problemOptions);
  if (!bound.ok())
    return bound.error();

  std::optional<BaselineCache> cache;
  if (options.useDiskCache) {
    auto opened = BaselineCache::open(scope, options.cacheDir);
    if (!opened.ok())
      return opened.error();
    cache.emplace(std::move(*opened));
  }
  auto sampler = corpus::Sampler::create(*impl->corpus, options.sampler);
  if (!sampler.ok())
    return sampler.error();
  impl->sampler = std::move(*sampler);

  unsigned jobs =
      options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  impl->planner = std::make_unique<CompilePlanner>(scope, **problem, clangPath, problemOptions,
                                                   options.flagRules, options.tempDir);
  impl->slots = std::make_unique<JobSlots>(jobs);
  impl->baselines = std::make_unique<BaselineService>(driver, *impl->planner, *impl->slots, cache,
                                                      impl->clang.fullText, options.compileTimeout,
                                                      jobs, &impl->spawner);

  impl->context.problem = *problem;
  impl->context.planner = impl->planner.get();
  impl->context.slots = impl->slots.get();
  impl->context.baselines = impl->baselines.get();
  impl->context.driver = impl->driver.get();
  impl->context.bound = *bound;
  impl->context.limits.compileTimeout = options.compileTimeout;
  impl->context.limits.maxObservations = options.maxObservations;
  impl->context.limits.scope = &scope;
  impl->context.limits.spawner = &impl->spawner;
  impl->context.limits.cancel = &impl->stopping;
  if (!options.fullCompile && (*problem)->decidesInCodegen()) {
    if (Status st = impl->startOptimizedIr(cache ? std::optional(cache->dir()) : std::nullopt);
        !st.ok())
      return st.error();
  }

  impl->description = describeProblem(**problem, **bound);
  impl->description.corpusRoot = impl->corpus->root();
  impl->description.corpusModules = impl->corpus->modules().size();
  impl->description.clangPath = clangPath;
  impl->description.clangVersion = impl->clang.version;
  impl->description.jobs = jobs;
  if (cache)
    impl->description.cacheDir = cache->dir();
  if (impl->optimizedIr) {
    impl->description.optimizedIr = true;
    impl->description.optimizedIrDir = impl->optimizedIr->cache().dir();
  }
  if (vocabulary) {
    impl->description.ir2vecVocabulary = problemOptions.ir2vecVocabulary;
    impl->description.ir2vecDimension = vocabulary->dimension();
    impl->description.ir2vecMissingEntities = vocabulary->missingEntities();
  }
  return std::unique_ptr<Environment>(new Environment(std::move(impl)));
}

Status Environment::Impl::startOptimizedIr(const std::optional<std::filesystem::path>& cacheDir) {
  // Twins' arguments carry -disable-llvm-optzns, which rules rewrite too.
  constexpr std::string_view kAdded = "-disable-llvm-optzns";
  std::vector<std::string> touching = options.flagRules.deleteFlags;
  for (const auto& [flag, value] : options.flagRules.replaceFlags)
    touching.push_back(flag);
  for (const std::string& flag : touching)
    if (kAdded.starts_with(flag))
      return makeError(ErrorCode::kInvalidArgument,
                       "the flag rule for '{}' would apply to {}, which episodes compiling "
                       "optimised IR add; drop the rule or compile in full (--full-compile)",
                       flag, kAdded);
  std::filesystem::path dir;
  if (cacheDir) {
    dir = *cacheDir / "optimized-ir";
  } else {
    auto temp = support::TempDir::create(*scope, "mlgo-env-optir-", options.tempDir);
    if (!temp.ok())
      return temp.error();
    optimizedIrDir = std::move(*temp);
    dir = optimizedIrDir.path();
  }
  auto cache = OptimizedIrCache::open(*scope, dir);
  if (!cache.ok())
    return cache.error();
  optimizedIr = std::make_unique<OptimizedIrService>(*driver, *planner, *slots, std::move(*cache),
                                                     clang.fullText, context.limits);
  context.optimizedIr = optimizedIr.get();
  return Status::success();
}

Environment::Environment(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<PreparedModule> Environment::prepareModule(std::string_view name) {
  auto module = impl_->corpus->find(name);
  if (!module.ok())
    return module.error();
  if (!impl_->optimizedIr)
    return PreparedModule{*module, false, false};
  auto prepared = impl_->optimizedIr->prepare(**module);
  if (!prepared.ok())
    return prepared.error();
  return PreparedModule{prepared->spec, prepared->spec != *module, prepared->built};
}

Environment::~Environment() {
  std::unordered_map<EpisodeId, std::shared_ptr<Episode>> episodes;
  {
    std::lock_guard lock(impl_->mutex);
    episodes.swap(impl_->episodes);
  }
  for (auto& [id, episode] : episodes) {
    std::lock_guard lock(episode->mutex());
    episode->close();
  }
}

void Environment::shutdown() {
  impl_->stopping = true;
  impl_->slots->close();
  impl_->baselines->cancel();
  // Its thread ends: the kernel SIGKILLs every compiler it started.
  impl_->spawner.stop();
}

const EnvironmentDescription& Environment::describe() const {
  return impl_->description;
}
const corpus::Corpus& Environment::corpus() const {
  return *impl_->corpus;
}
const Problem& Environment::problem() const {
  return *impl_->problem;
}
support::CleanupScope& Environment::cleanupScope() const {
  return *impl_->scope;
}

size_t Environment::openEpisodes() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->episodes.size();
}

Result<std::shared_ptr<Episode>> Environment::Impl::find(EpisodeId id) const {
  std::lock_guard lock(mutex);
  auto it = episodes.find(id);
  if (it == episodes.end())
    return makeError(ErrorCode::kNotFound, "no open episode {} (it ended or was closed)", id);
  return it->second;
}

std::optional<pid_t> Environment::compilerPid(EpisodeId episode) const {
  auto found = impl_->find(episode);
  if (!found.ok())
    return std::nullopt;
  std::lock_guard lock((*found)->mutex());
  return (*found)->pid();
}

Result<size_t> Environment::Impl::sample(std::optional<uint64_t> seed) {
  std::lock_guard lock(samplerMutex);
  if (seed) {
    corpus::SamplerOptions reseeded = options.sampler;
    reseeded.seed = *seed;
    auto created = corpus::Sampler::create(*corpus, reseeded);
    if (!created.ok())
      return created.error();
    sampler = std::move(*created);
  }
  // Bounded: every module without decisions is remembered, so after enough
  // draws either one with decisions comes up or all are known to have none.
  size_t modules = corpus->modules().size();
  for (size_t draw = 0; draw < 64 * modules; ++draw) {
    size_t index = sampler->next();
    if (!withoutDecisions.contains(index))
      return index;
    if (withoutDecisions.size() == modules)
      break;
  }
  return makeError(ErrorCode::kNotFound,
                   "no module of corpus {} makes a decision for problem {} (all {} were tried)",
                   corpus->root().string(), problem->name(), withoutDecisions.size());
}

Result<ResetResult> Environment::Impl::startOn(size_t moduleIndex,
                                               const EpisodeOptions& episodeOptions,
                                               const support::InterruptCheck* stop) {
  EpisodeId id;
  {
    std::lock_guard lock(mutex);
    id = nextId++;
  }
  const corpus::ModuleSpec& module = corpus->modules()[moduleIndex];
  auto episode = std::make_shared<Episode>(id, module, episodeOptions, context);
  ResetResult result;
  result.episode = id;
  result.module = module.name;
  std::optional<std::shared_future<Embedding>> embedding;
  if (embedder && options.moduleEmbeddings) {
    auto started = moduleEmbedding(moduleIndex);
    if (!started.ok())
      return started.error();
    embedding = std::move(*started);
  }
  std::unique_lock episodeLock(episode->mutex());
  if (Status started = episode->start(result.step, stop); !started.ok()) {
    if (embedding) {
      embedding->wait();
      forgetEmbedding(moduleIndex); // A module fixed on disk then embeds anew.
    }
    return started.error();
  }
  if (embedding) {
    const Embedding& computed = embedding->get();
    if (!computed.ok()) {
      forgetEmbedding(moduleIndex); // The next reset tries again.
      episode->close();
      return makeError(computed.error().code(), "episode {} on {}: module embedding: {}", id,
                       module.name, computed.error().message());
    }
    result.moduleEmbedding = *computed;
  }
  if (!episode->over()) {
    std::lock_guard lock(mutex);
    episodes.emplace(id, episode);
  }
  return result;
}

Result<std::shared_future<Environment::Impl::Embedding>>
Environment::Impl::moduleEmbedding(size_t moduleIndex) {
  std::lock_guard lock(embeddingMutex);
  if (auto it = embeddings.find(moduleIndex); it != embeddings.end())
    return it->second;
  std::filesystem::path bitcode = corpus->modules()[moduleIndex].bitcodePath;
  std::shared_future<Embedding> future;
  try {
    // Its own thread, so the embedding is computed while clang starts.
    future = std::async(std::launch::async, [this, bitcode]() -> Embedding {
               auto vector = embedder->moduleVector(bitcode);
               if (!vector.ok())
                 return vector.error();
               return std::make_shared<const std::vector<double>>(std::move(*vector));
             }).share();
  } catch (const std::system_error& e) {
    return makeError(ErrorCode::kIo, "cannot start a thread to embed {}: {}", bitcode.string(),
                     e.what());
  }
  embeddings.emplace(moduleIndex, future);
  return future;
}

void Environment::Impl::forgetEmbedding(size_t moduleIndex) {
  std::lock_guard lock(embeddingMutex);
  auto it = embeddings.find(moduleIndex);
  // Only a failed one: a concurrent reset may have replaced it already.
  if (it != embeddings.end() &&
      it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready &&
      !it->second.get().ok())
    embeddings.erase(it);
}

Result<ResetResult> Environment::reset(const ResetRequest& request,
                                       const support::InterruptCheck* stop) {
  Impl& impl = *impl_;
  if (impl.stopping)
    return makeError(ErrorCode::kIo, "cannot start an episode: the environment is shutting down");
  if (impl.reserved.fetch_add(1) >= impl.options.maxEpisodes) {
    impl.reserved.fetch_sub(1);
    return makeError(ErrorCode::kBusy, "too many open episodes (the limit is {}); close some first",
                     impl.options.maxEpisodes);
  }
  auto result = [&]() -> Result<ResetResult> {
    if (!request.module.empty()) {
      auto module = impl.corpus->find(request.module);
      if (!module.ok())
        return module.error();
      return impl.startOn(static_cast<size_t>(*module - impl.corpus->modules().data()),
                          request.options, stop);
    }
    std::optional<uint64_t> seed = request.seed;
    for (;;) {
      auto index = impl.sample(seed);
      if (!index.ok())
        return index.error();
      seed.reset();
      auto started = impl.startOn(*index, request.options, stop);
      // (A fork whose compile ended in its prefix did make decisions.)
      if (!started.ok() || !started->step.terminated || started->step.truncated ||
          (started->step.summary && started->step.summary->prefixSteps > 0))
        return started;
      // A sampled module without decisions is skipped (gymnasium semantics).
      std::lock_guard lock(impl.samplerMutex);
      impl.withoutDecisions.insert(*index);
    }
  }();
  if (!result.ok() || result->step.terminated || result->step.truncated)
    impl.reserved.fetch_sub(1);
  return result;
}

template <typename Call>
auto Environment::Impl::onEpisode(EpisodeId id, Call&& call) -> decltype(call(std::declval<Episode&>())) {
  auto found = find(id);
  if (!found.ok())
    return found.error();
  Episode& episode = **found;
  std::optional<decltype(call(episode))> outcome;
  bool over;
  {
    std::lock_guard lock(episode.mutex());
    if (episode.over())
      return makeError(ErrorCode::kNotFound, "no open episode {} (it ended or was closed)", id);
    outcome.emplace(call(episode));
    over = episode.over();
  }
  if (over) {
    std::lock_guard lock(mutex);
    if (episodes.erase(id) > 0)
      reserved.fetch_sub(1);
  }
  return std::move(*outcome);
}

Status Environment::step(EpisodeId id, const ActionValue& action, StepResult& result,
                         const support::InterruptCheck* stop) {
  return impl_->onEpisode(id, [&](Episode& e) { return e.step(action, result, stop); });
}

Result<StepProgress> Environment::beginStep(EpisodeId id, const ActionValue& action, int& fd) {
  return impl_->onEpisode(id, [&](Episode& e) { return e.beginStep(action, fd); });
}

Result<StepProgress> Environment::pollStep(EpisodeId id, StepResult& result) {
  return impl_->onEpisode(id, [&](Episode& e) { return e.pollStep(result); });
}

Status Environment::finishStep(EpisodeId id, StepResult& result,
                               const support::InterruptCheck* stop) {
  return impl_->onEpisode(id, [&](Episode& e) { return e.finishStep(result, stop); });
}

Status Environment::close(EpisodeId id) {
  std::shared_ptr<Episode> episode;
  {
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->episodes.find(id);
    if (it == impl_->episodes.end())
      return makeError(ErrorCode::kNotFound, "no open episode {} (it ended or was closed)", id);
    episode = std::move(it->second);
    impl_->episodes.erase(it);
    impl_->reserved.fetch_sub(1);
  }
  std::lock_guard lock(episode->mutex());
  episode->close();
  return Status::success();
}

} // namespace mlgo::env
