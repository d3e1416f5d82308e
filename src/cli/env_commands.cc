//===- src/cli/env_commands.cc - the env subcommands ---------------------===//
///
/// \file
/// `mlgo-env info [--problem=P] [--clang=PATH]`: which clang is used, its
/// version, which problems it supports (each probed with a tiny interactive
/// compile) and each problem's feature and advice specs, as clang declares
/// them. Exit code 0 when every requested problem is supported. With
/// `--ir2vec-vocab=V|default` the inlining probe switches on IR2Vec features.
///
/// (The episode-running commands - the stdio server, serve, trace, replay -
/// are registered by their own files.)
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"
#include "cli/interrupt.h"

#include "mlgo/env/clang_probe.h"
#include "mlgo/env/problem.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <fmt/format.h>

#include <memory>
#include <string>

namespace mlgo::cli {
namespace {

struct InfoOptions {
  std::string problem;
  std::string clang = MLGO_DEFAULT_CLANG;
  bool includeDefaultFeature = false;
  std::string ir2vecVocab;
};

void printSpecs(const env::Problem& problem, const env::BoundProblem& bound) {
  fmt::print("    features ({}, {} bytes per observation):\n", bound.visibleFeatures().size(), [&] {
    uint64_t bytes = 0;
    for (size_t i : bound.visibleFeatures())
      bytes += bound.header().features[i].byteSize();
    return bytes;
  }());
  for (size_t i : bound.visibleFeatures())
    fmt::print("      {}\n", bound.header().features[i].toJson());
  if (bound.visibleFeatures().size() != bound.header().features.size()) {
    fmt::print("    reported in step info, not a feature (--include-default-feature shows it):\n");
    for (size_t i = 0; i < bound.header().features.size(); ++i) {
      bool visible = false;
      for (size_t v : bound.visibleFeatures())
        visible = visible || v == i;
      if (!visible)
        fmt::print("      {}\n", bound.header().features[i].toJson());
    }
  }
  fmt::print("    action: {}\n", bound.actionSpec().toJson());
  fmt::print("      valid: {}\n", bound.actionRule());
  fmt::print("    reward: {}\n", problem.rewardDefinition());
  std::string source = bound.defaultDecisionSource();
  fmt::print("    default decision (info.default_action): {}\n",
             source.empty() ? "none" : source);
}

int runInfo(const InfoOptions& options) {
  support::CleanupScope scope;
  InterruptGuard interrupts("mlgo-env info", scope);
  std::vector<const env::Problem*> problems;
  if (options.problem.empty()) {
    for (const env::Problem* p : env::allProblems())
      problems.push_back(p);
  } else {
    auto found = env::findProblem(options.problem);
    if (!found.ok()) {
      fmt::print(stderr, "mlgo-env info: error: {}\n", found.error().message());
      return 1;
    }
    problems.push_back(*found);
  }
  auto version = env::queryClangVersion(scope, options.clang);
  if (!version.ok()) {
    fmt::print(stderr, "mlgo-env info: error: {}\n", version.error().message());
    return 1;
  }
  fmt::print("clang: {}\n", version->path.string());
  fmt::print("version: {}\n", version->version);

  env::ProblemOptions problemOptions;
  problemOptions.includeDefaultFeature = options.includeDefaultFeature;
  if (!options.ir2vecVocab.empty()) {
    std::error_code ec;
    std::filesystem::path path =
        std::filesystem::absolute(ir2vec::vocabularyArgument(options.ir2vecVocab), ec);
    if (ec) {
      fmt::print(stderr, "mlgo-env info: error: IR2Vec vocabulary {}: {}\n", options.ir2vecVocab,
                 ec.message());
      return 1;
    }
    path = path.lexically_normal();
    auto vocabulary = ir2vec::Vocabulary::load(path);
    if (!vocabulary.ok()) {
      fmt::print(stderr, "mlgo-env info: error: IR2Vec vocabulary: {}\n",
                 vocabulary.error().message());
      return 1;
    }
    problemOptions.ir2vecVocabulary = path;
    problemOptions.ir2vecDimension = vocabulary->dimension();
    fmt::print("IR2Vec vocabulary: {} ({} dimensions)\n", path.string(), vocabulary->dimension());
  }
  int unsupported = 0;
  for (const env::Problem* problem : problems) {
    if (problem->name() != "regalloc")
      continue;
    auto llvmOptions = env::queryLlvmOptions(scope, options.clang);
    if (!llvmOptions.ok()) {
      fmt::print(stderr, "mlgo-env info: error: {}\n", llvmOptions.error().message());
      return 1;
    }
    problemOptions.regallocClangDefault = env::offersRegallocIncludeDefault(*llvmOptions);
    fmt::print("-{}: {}\n", env::kRegallocIncludeDefaultOption,
               problemOptions.regallocClangDefault
                   ? "offered (regalloc uses clang's own default eviction decision)"
                   : "not offered (regalloc's default decision is the host emulation)");
  }
  for (const env::Problem* problem : problems) {
    fmt::print("\nproblem {}: {}\n", problem->name(), problem->summary());
    auto probe = env::probeProblem(scope, options.clang, *problem, problemOptions);
    auto bound = probe.ok() ? problem->bind(probe->header, problemOptions)
                            : Result<std::shared_ptr<const env::BoundProblem>>(probe.error());
    if (!bound.ok()) {
      fmt::print("  supported: no\n    {}\n", bound.error().message());
      ++unsupported;
      continue;
    }
    fmt::print("  supported: yes (probe compile made {} decisions)\n", probe->observations);
    fmt::print("  demo corpus variant: -{}\n", problem->demoCorpusVariant());
    printSpecs(*problem, **bound);
  }
  return unsupported == 0 ? 0 : 2;
}

} // namespace

void addEnvCommands(CLI::App& app, Action& action) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* info = app.add_subcommand(
      "info", "Show the clang in use, the problems it supports and their feature specs");
  info->add_option("--problem", options->problem,
                   "only this problem: inlining | regalloc | regalloc-priority");
  info->add_option("--clang", options->clang, "clang to probe")->capture_default_str();
  info->add_flag("--include-default-feature", options->includeDefaultFeature,
                 "inlining: list inlining_default among the features");
  info->add_option("--ir2vec-vocab", options->ir2vecVocab,
                   "IR2Vec vocabulary, or 'default': inlining lists its embedding features");
  info->callback([options, &action] { action = [options] { return runInfo(*options); }; });
}

} // namespace mlgo::cli
