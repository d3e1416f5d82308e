//===- env/environment.cc - the gym-style environment's episodes ----------===//
///
/// Environment's calls once it exists: reset (sampling, module embeddings),
/// step and its non-blocking halves, close, shutdown. create() is in
/// environment_create.cc; the state both share is environment_impl.h.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "environment_impl.h"

#include <system_error>

namespace mlgo::env {

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
