//===- env/environment_create.cc - Environment::create --------------------===//
///
/// create() in three steps, each a member of Environment::Impl
/// (environment_impl.h): checkOptions (no compiler runs), probeCompiler
/// (clang's version and options, the problem's probe), construct (cache,
/// sampler, job slots, services, description). The first error ends it.
///
//===----------------------------------------------------------------------===//
#include "environment_impl.h"

#include "mlgo/corpus/command_check.h"
#include "mlgo/env/score.h"

#include <system_error>
#include <thread>

namespace mlgo::env {
namespace {

Result<std::filesystem::path> corpusDir(const EnvironmentOptions& options, const Problem& problem) {
  if (!options.corpus.empty())
    return options.corpus;
  return corpus::defaultDemoCorpusDir(problem.demoCorpusVariant());
}

EnvironmentDescription describeProblem(const Problem& problem, const BoundProblem& bound,
                                       std::string_view regallocScore) {
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
  d.rewardDefinition = problem.rewardDefinition(regallocScore);
  return d;
}

} // namespace

Result<std::unique_ptr<Environment>> Environment::create(const EnvironmentOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->scope = options.cleanup ? options.cleanup : std::make_shared<support::CleanupScope>();
  impl->driver = options.driver ? options.driver : processCompilerDriver();
  Impl::Settings settings;
  MLGO_TRY(impl->checkOptions(settings));
  MLGO_TRY(impl->probeCompiler(settings));
  MLGO_TRY(impl->construct(settings));
  return std::unique_ptr<Environment>(new Environment(std::move(impl)));
}

Status Environment::Impl::checkOptions(Settings& settings) {
  auto found = findProblem(options.problem);
  if (!found.ok())
    return found.error();
  problem = *found;
  settings.problemOptions = options.problemOptions;
  if (Status known = checkRegallocScore(settings.problemOptions.regallocScore); !known.ok())
    return known.error().withContext("regalloc_score");
  // The vocabulary first: a bad file is reported before clang is probed.
  if (!options.ir2vecVocabulary.empty())
    MLGO_TRY(loadVocabulary(settings));

  auto dir = corpusDir(options, *problem);
  if (!dir.ok())
    return dir.error();
  auto opened = corpus::Corpus::open(*dir);
  if (!opened.ok())
    return opened.error();
  corpus.emplace(std::move(*opened));
  // Every module's command, once, before any clang runs (command_check.h).
  if (auto checked = corpus::checkCorpusCommands(*corpus, options.flagRules); !checked.ok())
    return checked.error().withContext(fmt::format("corpus {}", corpus->root().string()));
  settings.clangPath = options.clang.empty() ? "clang-22" : options.clang;
  if (!options.fixedPriorities.empty()) {
    if (problem->name() != "regalloc")
      return makeError(ErrorCode::kInvalidArgument,
                       "fixed_priorities: only the regalloc problem (evictions) takes a "
                       "priorities file, not {}",
                       problem->name());
    auto loaded = FixedPriorities::load(options.fixedPriorities);
    if (!loaded.ok())
      return loaded.error();
    settings.priorities = std::move(*loaded);
  }
  return Status::success();
}

Status Environment::Impl::loadVocabulary(Settings& settings) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(options.ir2vecVocabulary, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "IR2Vec vocabulary {}: {}", options.ir2vecVocabulary.string(),
                     ec.message());
  auto loaded = ir2vec::Vocabulary::load(absolute);
  if (!loaded.ok())
    return std::move(loaded).error().withContext("IR2Vec vocabulary");
  auto created = ir2vec::Embedder::create(*loaded);
  if (!created.ok())
    return created.error();
  embedder.emplace(std::move(*created));
  settings.problemOptions.ir2vecVocabulary = absolute.lexically_normal();
  settings.problemOptions.ir2vecDimension = loaded->dimension();
  settings.vocabulary.emplace(std::move(*loaded));
  return Status::success();
}

Status Environment::Impl::probeCompiler(Settings& settings) {
  // Directories left by hosts that died without cleaning up (SIGKILL, a
  // crash) go before we add ours.
  support::TempDir::reapOrphans(options.tempDir);
  auto version = driver->version(*scope, settings.clangPath, std::chrono::seconds(30));
  if (!version.ok())
    return version.error();
  clang = std::move(*version);
  if (problem->name() == "regalloc") {
    // clang's own default eviction decision, when this clang can send it.
    auto llvmOptions =
        driver->llvmOptions(*scope, settings.clangPath, options.compileTimeout, options.tempDir);
    if (!llvmOptions.ok())
      return llvmOptions.error();
    settings.problemOptions.regallocClangDefault = offersRegallocIncludeDefault(*llvmOptions);
  }
  auto probe = driver->probe(*scope, settings.clangPath, *problem, settings.problemOptions,
                             options.compileTimeout, options.tempDir);
  if (!probe.ok())
    return probe.error();
  auto bound = problem->bind(probe->header, settings.problemOptions);
  if (!bound.ok())
    return bound.error();
  settings.bound = std::move(*bound);
  return Status::success();
}

Status Environment::Impl::construct(const Settings& settings) {
  std::optional<BaselineCache> cache;
  if (options.useDiskCache) {
    auto opened = BaselineCache::open(*scope, options.cacheDir);
    if (!opened.ok())
      return opened.error();
    cache.emplace(std::move(*opened));
  }
  auto created = corpus::Sampler::create(*corpus, options.sampler);
  if (!created.ok())
    return created.error();
  sampler = std::move(*created);

  unsigned jobs =
      options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  planner = std::make_unique<CompilePlanner>(*scope, *problem, settings.clangPath,
                                             settings.problemOptions, options.flagRules,
                                             options.tempDir);
  planner->setFixedPriorities(settings.priorities);
  slots = std::make_unique<JobSlots>(jobs);
  baselines = std::make_unique<BaselineService>(*driver, *planner, *slots, cache, clang.fullText,
                                                options.compileTimeout, jobs, &spawner);

  context.problem = problem;
  context.planner = planner.get();
  context.slots = slots.get();
  context.baselines = baselines.get();
  context.driver = driver.get();
  context.bound = settings.bound;
  context.limits.compileTimeout = options.compileTimeout;
  context.limits.maxObservations = options.maxObservations;
  context.limits.scope = scope.get();
  context.limits.spawner = &spawner;
  context.limits.cancel = &stopping;
  if (!options.fullCompile && problem->decidesInCodegen())
    MLGO_TRY(startOptimizedIr(cache ? std::optional(cache->dir()) : std::nullopt));
  describeEnvironment(settings, cache ? &*cache : nullptr, jobs);
  return Status::success();
}

void Environment::Impl::describeEnvironment(const Settings& settings, const BaselineCache* cache,
                                            unsigned jobs) {
  description = describeProblem(*problem, *settings.bound, settings.problemOptions.regallocScore);
  description.corpusRoot = corpus->root();
  description.corpusModules = corpus->modules().size();
  description.clangPath = settings.clangPath;
  description.clangVersion = clang.version;
  description.jobs = jobs;
  if (cache)
    description.cacheDir = cache->dir();
  if (optimizedIr) {
    description.optimizedIr = true;
    description.optimizedIrDir = optimizedIr->cache().dir();
  }
  if (settings.vocabulary) {
    description.ir2vecVocabulary = settings.problemOptions.ir2vecVocabulary;
    description.ir2vecDimension = settings.vocabulary->dimension();
    description.ir2vecMissingEntities = settings.vocabulary->missingEntities();
  }
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
  auto opened = OptimizedIrCache::open(*scope, dir);
  if (!opened.ok())
    return opened.error();
  optimizedIr = std::make_unique<OptimizedIrService>(*driver, *planner, *slots, std::move(*opened),
                                                     clang.fullText, context.limits);
  context.optimizedIr = optimizedIr.get();
  return Status::success();
}

} // namespace mlgo::env
