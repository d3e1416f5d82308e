//===- src/cli/env_options.cc - flags shared by environment commands ------===//
#include "cli/env_options.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/sampler.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <cmath>

namespace mlgo::cli {

void EnvironmentFlags::addTo(CLI::App* command) {
  auto& o = options;
  command->add_option("--problem", o.problem, "inlining | regalloc | regalloc-priority")
      ->capture_default_str();
  command->add_option("--corpus", o.corpus,
                      "corpus directory (default: the bundled demo corpus; -Oz for inlining, "
                      "-O2 for the register-allocation problems)");
  command->add_option("--clang", o.clang, "clang to drive (default: " MLGO_DEFAULT_CLANG ")");
  command->add_option("--jobs", o.jobs, "compilers working at once (default: cores)");
  command->add_option("--seed", seed, "sampler seed")->capture_default_str();
  command->add_option("--sampler", sampler, "uniform | without-replacement | round-robin")
      ->capture_default_str();
  command->add_option("--cache-dir", o.cacheDir,
                      "baseline score cache (default: $XDG_CACHE_HOME/mlgo-env)");
  command->add_flag("--no-disk-cache", noDiskCache, "keep baseline scores in memory only");
  command->add_flag("--full-compile", o.fullCompile,
                    "regalloc problems: compile every episode in full from the corpus bitcode, "
                    "not from the module's cached optimised IR (same scores, about twice the "
                    "time)");
  command->add_option("--compile-timeout", compileTimeoutSeconds,
                      "seconds the host waits on one compiler")
      ->capture_default_str();
  command->add_option("--max-observations", o.maxObservations,
                      "decision requests one compile may make")
      ->capture_default_str();
  maxEpisodesOption =
      command->add_option("--max-episodes", o.maxEpisodes, "open episodes at once")
          ->capture_default_str();
  command->add_option("--temp-dir", o.tempDir,
                      "parent of per-compile temporary directories (default: $TMPDIR or /tmp; "
                      "/dev/shm saves time per episode)");
  command->add_option("--priority-fallback", o.problemOptions.priorityFallback,
                      "regalloc-priority: the fallback policy (constant, li_size, weight, stage, "
                      "stage-then-size)")
      ->capture_default_str();
  command->add_flag("--include-default-feature", o.problemOptions.includeDefaultFeature,
                    "inlining: show clang's inlining_default to the agent as a feature");
  command->add_option("--ir2vec-vocab", ir2vecVocab,
                      "IR2Vec vocabulary (LLVM JSON), or 'default' for the shipped one: adds "
                      "the module embedding to reset's info and, for inlining, clang's "
                      "callee_embedding/caller_embedding features");
  command->add_option("--delete-flag", deleteFlags, "drop this flag from recompile commands");
  command->add_option("--replace-flag", replaceFlags, "FLAG=VALUE in recompile commands");
  command->add_option("--add-flag", addFlags, "append this argument to recompile commands");
}

Result<env::EnvironmentOptions> EnvironmentFlags::finish() const {
  env::EnvironmentOptions out = options;
  if (!(compileTimeoutSeconds > 0) || !std::isfinite(compileTimeoutSeconds))
    return makeError(ErrorCode::kInvalidArgument, "--compile-timeout must be a positive number");
  out.compileTimeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(compileTimeoutSeconds * 1000)));
  auto kind = corpus::parseSamplerKind(sampler);
  if (!kind)
    return std::move(kind).error().withContext("--sampler");
  out.sampler.kind = *kind;
  out.sampler.seed = seed;
  out.useDiskCache = !noDiskCache;
  if (!ir2vecVocab.empty())
    out.ir2vecVocabulary = ir2vecVocabularyArgument(ir2vecVocab);
  auto rules = corpus::parseFlagRules(deleteFlags, replaceFlags, addFlags);
  if (!rules)
    return std::move(rules).error();
  out.flagRules = std::move(*rules);
  return out;
}

std::filesystem::path ir2vecVocabularyArgument(const std::string& value) {
  return value == "default" ? ir2vec::defaultVocabularyPath() : std::filesystem::path(value);
}

} // namespace mlgo::cli
