//===- src/cli/ir2vec_commands.cc - the ir2vec subcommands ----------------===//
///
/// \file
///   mlgo-env ir2vec triplets [--corpus=DIR] [MODULE...] --output=F
///   mlgo-env ir2vec train --triplets=F --output=vocab.json [--dim=N] [--holdout=0.1]
///   mlgo-env ir2vec embed [--vocab=V] [--level=func|bb|inst] [--format=text|json]
///                         [--corpus=DIR] [MODULE...]
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"

#include "mlgo/corpus/corpus.h"
#include "mlgo/ir2vec/embedder.h"
#include "mlgo/ir2vec/embedding_format.h"
#include "mlgo/ir2vec/link_prediction.h"
#include "mlgo/ir2vec/module_list.h"
#include "mlgo/ir2vec/transe.h"
#include "mlgo/ir2vec/triplet_generator.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace mlgo::cli {
namespace {

namespace fs = std::filesystem;
using namespace mlgo::ir2vec;

int fail(const Error& error) {
  fmt::print(stderr, "mlgo-env: error: {}\n", error.message());
  return 1;
}

/// The bitcode of every module of the corpus at `dir`.
Result<std::vector<fs::path>> corpusModules(const fs::path& dir) {
  Result<corpus::Corpus> opened = corpus::Corpus::open(dir);
  if (!opened)
    return std::move(opened).error();
  std::vector<fs::path> paths;
  for (const corpus::ModuleSpec& module : opened->modules())
    paths.push_back(module.bitcodePath);
  return paths;
}

/// Modules from --corpus and the positional inputs (files, corpus
/// directories, other directories of .bc files); with neither, the bundled
/// demo corpus (its -Oz variant).
Result<std::vector<fs::path>> inputModules(const std::string& corpusDir,
                                           const std::vector<std::string>& inputs) {
  std::vector<fs::path> modules;
  auto append = [&](Result<std::vector<fs::path>> more) -> Status {
    if (!more)
      return std::move(more).error();
    modules.insert(modules.end(), more->begin(), more->end());
    return Status::success();
  };
  if (corpusDir.empty() && inputs.empty()) {
    Result<fs::path> demo = corpus::defaultDemoCorpusDir("Oz");
    if (!demo)
      return std::move(demo).error();
    Status added = append(corpusModules(*demo));
    if (!added)
      return added.error().withContext(
          "no modules given and the bundled demo corpus is not usable (build the default "
          "target, or give --corpus=DIR or bitcode files)");
    return modules;
  }
  if (!corpusDir.empty())
    MLGO_TRY(append(corpusModules(corpusDir)));
  for (const std::string& input : inputs) {
    std::error_code ec;
    bool isCorpus = fs::exists(fs::path(input) / "corpus_description.json", ec);
    MLGO_TRY(append(isCorpus ? corpusModules(input) : resolveModules({fs::path(input)})));
  }
  return modules;
}

// --- triplets ---------------------------------------------------------------

struct TripletsConfig {
  std::string corpus;
  std::vector<std::string> modules;
  std::string output;
  std::string levels = "O0,O1,O2,O3,Os,Oz";
  bool noPredicates = false;
  unsigned jobs = 0;
  bool quiet = false;
};

int runTriplets(const TripletsConfig& config) {
  Result<std::vector<fs::path>> modules = inputModules(config.corpus, config.modules);
  if (!modules)
    return fail(modules.error());
  Result<std::vector<OptLevel>> levels = parseOptLevels(config.levels);
  if (!levels)
    return fail(levels.error());
  TripletOptions options;
  options.levels = *levels;
  options.includePredicates = !config.noPredicates;
  options.jobs = config.jobs;
  if (!config.quiet)
    options.progress = [](size_t done, size_t total, const fs::path& module) {
      fmt::print(stderr, "[{}/{}] {}\n", done, total, module.string());
    };
  Result<TripletSet> set = generateTriplets(*modules, options);
  if (!set)
    return fail(set.error());
  if (Status saved = set->save(config.output); !saved)
    return fail(saved.error());
  fmt::print(stderr, "wrote {} unique triplets ({} entities, {} relations) to {}\n",
             set->triplets.size(), set->entities.size(), set->relations.size(), config.output);
  return 0;
}

void addTriplets(CLI::App& parent, Action& action) {
  auto config = std::make_shared<TripletsConfig>();
  CLI::App* cmd = parent.add_subcommand(
      "triplets", "Generate IR2Vec training triplets from bitcode at several optimisation levels");
  cmd->add_option("--corpus", config->corpus,
                  "Corpus directory (default, with no modules given: the bundled demo corpus)");
  cmd->add_option("modules", config->modules,
                  "Bitcode files, corpus directories or directories of .bc files");
  cmd->add_option("--output,-o", config->output, "Triplet file to write")->required();
  cmd->add_option("--opt-levels", config->levels,
                  "Pipelines to run on each module, comma-separated")
      ->capture_default_str();
  cmd->add_flag("--no-predicates", config->noPredicates,
                "Leave out compare-predicate triplets (exactly LLVM 22's triplets)");
  cmd->add_option("--jobs,-j", config->jobs, "Worker threads (0 = all cores)")
      ->capture_default_str();
  cmd->add_flag("--quiet,-q", config->quiet, "No per-module progress");
  cmd->callback([config, &action] { action = [config] { return runTriplets(*config); }; });
}

// --- train ------------------------------------------------------------------

struct TrainConfig {
  std::string triplets;
  std::string output;
  TransEConfig transe;
  double holdout = 0;
  unsigned logEvery = 1;
  bool noBern = false;
};

void printMetrics(std::string_view label, const LinkPredictionMetrics& m) {
  fmt::print("  {:<20} hits@10 {:6.2f}%   mean rank {:7.2f}   MRR {:.3f}\n", label,
             100 * m.hitsAt10, m.meanRank, m.meanReciprocalRank);
}

int runTrain(TrainConfig config) {
  Result<TripletSet> all = TripletSet::load(config.triplets);
  if (!all)
    return fail(all.error());
  // Duplicates (llvm-ir2vec's output has them) must not straddle the split.
  std::sort(all->triplets.begin(), all->triplets.end());
  all->triplets.erase(std::unique(all->triplets.begin(), all->triplets.end()), all->triplets.end());
  config.transe.bernoulli = !config.noBern;
  unsigned logEvery = std::max(1u, config.logEvery);
  config.transe.onEpoch = [logEvery](const EpochReport& r) {
    if (r.epoch % logEvery == 0 || r.epoch == r.epochs || r.epoch == 1)
      fmt::print(stderr, "epoch {:>5}/{}  loss {:12.4f}  violating {:6.2f}%  {:.3f}s\n", r.epoch,
                 r.epochs, r.loss, 100 * r.violatingFraction, r.seconds);
  };
  auto [train, test] = splitTriplets(*all, config.holdout, config.transe.seed);
  fmt::print(stderr, "training on {} unique triplets ({} held out), dimension {}, {} epochs\n",
             train.triplets.size(), test.triplets.size(), config.transe.dimension,
             config.transe.epochs);
  Result<TransEModel> model = trainTransE(train, config.transe);
  if (!model)
    return fail(model.error());
  if (!test.triplets.empty()) {
    TransEConfig baseline = config.transe;
    baseline.trainEntities = false;
    baseline.onEpoch = nullptr;
    Result<TransEModel> random = trainTransE(train, baseline);
    if (!random)
      return fail(random.error());
    fmt::print("link prediction on {} held-out triplets (filtered ranks among {} entities):\n",
               test.triplets.size(), all->entities.size());
    printMetrics("trained vocabulary",
                 evaluateLinkPrediction(*model, test.triplets, all->triplets));
    printMetrics("random vocabulary",
                 evaluateLinkPrediction(*random, test.triplets, all->triplets));
  }
  Result<Vocabulary> vocabulary = model->toVocabulary(all->entities);
  if (!vocabulary)
    return fail(vocabulary.error());
  if (Status saved = vocabulary->save(config.output); !saved)
    return fail(saved.error());
  fmt::print(stderr, "wrote {} ({} entities x {})\n", config.output, all->entities.size(),
             config.transe.dimension);
  return 0;
}

void addTrain(CLI::App& parent, Action& action) {
  auto config = std::make_shared<TrainConfig>();
  TransEConfig& t = config->transe;
  CLI::App* cmd = parent.add_subcommand(
      "train", "Train an IR2Vec vocabulary with TransE and write LLVM's vocabulary JSON");
  cmd->add_option("--triplets", config->triplets,
                  "Triplet file (from 'ir2vec triplets' or 'llvm-ir2vec triplets')")
      ->required();
  cmd->add_option("--output,-o", config->output, "Vocabulary JSON to write")->required();
  cmd->add_option("--dim", t.dimension, "Vector dimension")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--epochs", t.epochs, "Training epochs")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--margin", t.margin, "Margin of the ranking loss")->capture_default_str();
  cmd->add_option("--lr", t.learningRate, "SGD learning rate")->capture_default_str();
  cmd->add_option("--batches", t.batchesPerEpoch, "Mini-batches per epoch")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--seed", t.seed, "Random seed")->capture_default_str();
  cmd->add_option("--jobs,-j", t.threads, "Worker threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--no-bern", config->noBern, "Corrupt head or tail 50/50 instead of 'bern'");
  cmd->add_option("--holdout", config->holdout,
                  "Fraction of triplets held out to report link prediction (hits@10, mean "
                  "rank) against a random vocabulary")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  cmd->add_option("--log-every", config->logEvery, "Print the loss every N epochs")
      ->capture_default_str();
  cmd->callback([config, &action] { action = [config] { return runTrain(*config); }; });
}

// --- embed ------------------------------------------------------------------

struct EmbedConfig {
  std::string vocab;
  std::string corpus;
  std::vector<std::string> modules;
  std::string level = "func";
  std::string kind = "symbolic";
  std::string format = "text";
  std::string function;
  std::string output;
  EmbeddingWeights weights;
  unsigned jobs = 1;
};

int runEmbed(const EmbedConfig& config) {
  Result<EmbeddingLevel> level = parseEmbeddingLevel(config.level);
  Result<EmbeddingKind> kind = parseEmbeddingKind(config.kind);
  Result<EmbeddingFormat> format = parseEmbeddingFormat(config.format);
  for (const Error* e : {level ? nullptr : &level.error(), kind ? nullptr : &kind.error(),
                         format ? nullptr : &format.error()})
    if (e)
      return fail(*e);
  Result<std::vector<fs::path>> modules = inputModules(config.corpus, config.modules);
  if (!modules)
    return fail(modules.error());
  fs::path vocabPath = config.vocab.empty() ? defaultVocabularyPath() : fs::path(config.vocab);
  Result<Vocabulary> vocabulary = Vocabulary::load(vocabPath);
  if (!vocabulary)
    return fail(vocabulary.error());
  if (size_t missing = vocabulary->missingEntities().size())
    fmt::print(stderr, "mlgo-env: warning: {}: {} entities missing (they embed as zeros)\n",
               vocabPath.string(), missing);
  Result<Embedder> embedder = Embedder::create(*vocabulary, *kind, config.weights);
  if (!embedder)
    return fail(embedder.error());

  Result<std::vector<ModuleEmbeddings>> embeddings =
      embedder->embedAll(*modules, *level, config.function, config.jobs);
  if (!embeddings)
    return fail(embeddings.error());
  std::string text;
  for (const ModuleEmbeddings& module : *embeddings)
    text += formatEmbeddings(module, *format);
  if (config.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  std::FILE* file = std::fopen(config.output.c_str(), "wb");
  bool written = file && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  written = file && std::fclose(file) == 0 && written;
  if (!written)
    return fail(makeError(ErrorCode::kIo, "{}: cannot write", config.output));
  return 0;
}

void addEmbed(CLI::App& parent, Action& action) {
  auto config = std::make_shared<EmbedConfig>();
  CLI::App* cmd = parent.add_subcommand(
      "embed", "Print IR2Vec embeddings of modules at full precision (LLVM's IR2Vec library)");
  cmd->add_option("--vocab", config->vocab,
                  "Vocabulary JSON (default: the bundled one, " + defaultVocabularyPath().string() +
                      ")");
  cmd->add_option("--corpus", config->corpus,
                  "Corpus directory (default, with no modules given: the bundled demo corpus)");
  cmd->add_option("modules", config->modules,
                  "Bitcode files, corpus directories or directories of .bc files");
  cmd->add_option("--level", config->level, "func, bb or inst")->capture_default_str();
  cmd->add_option("--kind", config->kind, "symbolic or flow-aware")->capture_default_str();
  cmd->add_option("--format", config->format, "text or json")->capture_default_str();
  cmd->add_option("--function", config->function,
                  "Only this function (every module given must define it)");
  cmd->add_option("--output,-o", config->output, "Write here instead of stdout");
  cmd->add_option("--opc-weight", config->weights.opcode, "Opcode weight")->capture_default_str();
  cmd->add_option("--type-weight", config->weights.type, "Type weight")->capture_default_str();
  cmd->add_option("--arg-weight", config->weights.argument, "Argument weight")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", config->jobs, "Modules embedded in parallel (0 = all cores)")
      ->capture_default_str();
  cmd->callback([config, &action] { action = [config] { return runEmbed(*config); }; });
}

} // namespace

void addIr2VecCommands(CLI::App& app, Action& action) {
  CLI::App* ir2vec = app.add_subcommand("ir2vec", "IR2Vec triplets, vocabulary training and "
                                                  "embeddings");
  ir2vec->require_subcommand(1);
  addTriplets(*ir2vec, action);
  addTrain(*ir2vec, action);
  addEmbed(*ir2vec, action);
}

} // namespace mlgo::cli
