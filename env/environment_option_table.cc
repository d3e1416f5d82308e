//===- env/environment_option_table.cc - the options, listed once ---------===//
#include "mlgo/env/environment_option_table.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/sampler.h"
#include "mlgo/env/score.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlgo::env {
namespace {

using O = EnvironmentOptions;
using V = OptionValue;

std::string& text(V& v) { return std::get<std::string>(v); }
uint64_t count(const V& v) { return std::get<uint64_t>(v); }
bool on(const V& v) { return std::get<bool>(v); }
std::vector<std::string>& texts(V& v) { return std::get<std::vector<std::string>>(v); }

Status setJobs(O& o, V v) {
  if (count(v) > std::numeric_limits<unsigned>::max())
    return makeError(ErrorCode::kInvalidArgument, "{} compilers is too many", count(v));
  o.jobs = static_cast<unsigned>(count(v));
  return Status::success();
}

Status setSampler(O& o, V v) {
  auto kind = corpus::parseSamplerKind(text(v));
  if (!kind)
    return std::move(kind).error();
  o.sampler.kind = *kind;
  return Status::success();
}

Status setCompileTimeout(O& o, V v) {
  double seconds = std::get<double>(v);
  if (!(seconds > 0) || !std::isfinite(seconds))
    return makeError(ErrorCode::kInvalidArgument, "must be a positive number of seconds");
  if (seconds > 1e9)
    return makeError(ErrorCode::kInvalidArgument, "{} seconds is too long", seconds);
  o.compileTimeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
  return Status::success();
}

Status setRegallocScore(O& o, V v) {
  MLGO_TRY(checkRegallocScore(text(v)));
  o.problemOptions.regallocScore = std::move(text(v));
  return Status::success();
}

Status setIr2VecVocabulary(O& o, V v) {
  o.ir2vecVocabulary = ir2vec::vocabularyArgument(text(v));
  return Status::success();
}

V getReplaceFlags(const O& o) {
  std::vector<std::string> rules;
  for (const auto& [flag, value] : o.flagRules.replaceFlags)
    rules.push_back(flag + "=" + value);
  return rules;
}

Status setReplaceFlags(O& o, V v) {
  o.flagRules.replaceFlags.clear();
  for (const std::string& rule : texts(v)) {
    size_t eq = rule.find('=');
    if (eq == std::string::npos || eq == 0)
      return makeError(ErrorCode::kInvalidArgument,
                       "replace rule '{}' must have the form FLAG=VALUE", rule);
    o.flagRules.replaceFlags.emplace_back(rule.substr(0, eq), rule.substr(eq + 1));
  }
  return Status::success();
}

/// Wraps an assignment that cannot fail.
template <typename F> constexpr auto assign(F) {
  return +[](O& o, V v) {
    F{}(o, v);
    return Status::success();
  };
}

constexpr EnvironmentOptionSpec kTable[] = {
    {.keyword = "problem", .flag = "--problem", .kind = OptionKind::kText,
     .help = "inlining | regalloc | regalloc-priority", .showDefault = true,
     .get = [](const O& o) -> V { return o.problem; },
     .set = assign([](O& o, V& v) { o.problem = std::move(text(v)); })},
    {.keyword = "corpus", .flag = "--corpus", .kind = OptionKind::kPath,
     .help = "corpus directory (default: the bundled demo corpus; -Oz for inlining, -O2 for the "
             "register-allocation problems)",
     .get = [](const O& o) -> V { return o.corpus.string(); },
     .set = assign([](O& o, V& v) { o.corpus = text(v); })},
    {.keyword = "clang", .flag = "--clang", .kind = OptionKind::kPath,
     .help = "clang to drive (default: " MLGO_DEFAULT_CLANG ")",
     .get = [](const O& o) -> V { return o.clang.string(); },
     .set = assign([](O& o, V& v) { o.clang = text(v); })},
    {.keyword = "jobs", .flag = "--jobs", .kind = OptionKind::kCount,
     .help = "compilers working at once (default: cores)",
     .get = [](const O& o) -> V { return uint64_t{o.jobs}; }, .set = setJobs},
    {.keyword = "seed", .flag = "--seed", .kind = OptionKind::kCount, .help = "sampler seed",
     .showDefault = true, .get = [](const O& o) -> V { return uint64_t{o.sampler.seed}; },
     .set = assign([](O& o, V& v) { o.sampler.seed = count(v); })},
    {.keyword = "sampler", .flag = "--sampler", .kind = OptionKind::kText,
     .help = "uniform | without-replacement | round-robin", .showDefault = true,
     .get = [](const O& o) -> V { return std::string(corpus::samplerKindName(o.sampler.kind)); },
     .set = setSampler},
    {.keyword = "cache_dir", .flag = "--cache-dir", .kind = OptionKind::kPath,
     .help = "baseline score cache (default: $XDG_CACHE_HOME/mlgo-env)",
     .get = [](const O& o) -> V { return o.cacheDir.string(); },
     .set = assign([](O& o, V& v) { o.cacheDir = text(v); })},
    {.keyword = "disk_cache", .flag = "--no-disk-cache", .kind = OptionKind::kSwitch,
     .help = "keep baseline scores in memory only", .flagValue = false,
     .get = [](const O& o) -> V { return o.useDiskCache; },
     .set = assign([](O& o, V& v) { o.useDiskCache = on(v); })},
    {.keyword = "full_compile", .flag = "--full-compile", .kind = OptionKind::kSwitch,
     .help = "regalloc problems: compile every episode in full from the corpus bitcode, not from "
             "the module's cached optimised IR (same scores, about twice the time)",
     .get = [](const O& o) -> V { return o.fullCompile; },
     .set = assign([](O& o, V& v) { o.fullCompile = on(v); })},
    {.keyword = "compile_timeout", .flag = "--compile-timeout", .kind = OptionKind::kSeconds,
     .help = "seconds the host waits on one compiler", .showDefault = true,
     .get = [](const O& o) -> V { return static_cast<double>(o.compileTimeout.count()) / 1000; },
     .set = setCompileTimeout},
    {.keyword = "max_observations", .flag = "--max-observations", .kind = OptionKind::kCount,
     .help = "decision requests one compile may make", .showDefault = true,
     .get = [](const O& o) -> V { return uint64_t{o.maxObservations}; },
     .set = assign([](O& o, V& v) { o.maxObservations = count(v); })},
    {.keyword = "max_episodes", .flag = "--max-episodes", .kind = OptionKind::kCount,
     .help = "open episodes at once", .showDefault = true,
     .get = [](const O& o) -> V { return uint64_t{o.maxEpisodes}; },
     .set = assign([](O& o, V& v) { o.maxEpisodes = count(v); })},
    {.keyword = "temp_dir", .flag = "--temp-dir", .kind = OptionKind::kPath,
     .help = "parent of per-compile temporary directories (default: $TMPDIR or /tmp; /dev/shm "
             "saves time per episode)",
     .get = [](const O& o) -> V { return o.tempDir.string(); },
     .set = assign([](O& o, V& v) { o.tempDir = text(v); })},
    {.keyword = "priority_fallback", .flag = "--priority-fallback", .kind = OptionKind::kText,
     .help = "regalloc-priority: the fallback policy (constant, li_size, weight, stage, "
             "stage-then-size)",
     .showDefault = true,
     .get = [](const O& o) -> V { return o.problemOptions.priorityFallback; },
     .set = assign([](O& o, V& v) { o.problemOptions.priorityFallback = std::move(text(v)); })},
    {.keyword = "regalloc_score", .flag = "--regalloc-score", .kind = OptionKind::kText,
     .help = "regalloc problems: the score, llvm (4*reloads + spills + 0.2*copies, folded ones "
             "like their kind) or instructions (spills + reloads + copies, folded ones 0: the "
             "instructions they add), each frequency-weighted, from clang's remarks; or "
             "executed (every instruction of the object times its block's frequency and its "
             "function's profile entry count: what the code is estimated to execute)",
     .showDefault = true,
     .get = [](const O& o) -> V { return o.problemOptions.regallocScore; },
     .set = setRegallocScore},
    {.keyword = "fixed_priorities", .flag = "--fixed-priorities", .kind = OptionKind::kPath,
     .help = "regalloc: a priorities file (modules, functions, multipliers of the weight "
             "fallback per question); episodes of its modules answer clang's priority "
             "questions from it, the agent the evictions",
     .get = [](const O& o) -> V { return o.fixedPriorities.string(); },
     .set = assign([](O& o, V& v) { o.fixedPriorities = std::move(text(v)); })},
    {.keyword = "include_default_feature", .flag = "--include-default-feature",
     .kind = OptionKind::kSwitch,
     .help = "inlining: show clang's inlining_default to the agent as a feature",
     .get = [](const O& o) -> V { return o.problemOptions.includeDefaultFeature; },
     .set = assign([](O& o, V& v) { o.problemOptions.includeDefaultFeature = on(v); })},
    {.keyword = "ir2vec_vocab", .flag = "--ir2vec-vocab", .kind = OptionKind::kPath,
     .help = "IR2Vec vocabulary (LLVM JSON), or 'default' for the shipped one: adds the module "
             "embedding to reset's info and, for inlining, clang's "
             "callee_embedding/caller_embedding features",
     .get = [](const O& o) -> V { return o.ir2vecVocabulary.string(); },
     .set = setIr2VecVocabulary},
    {.keyword = "module_embeddings", .kind = OptionKind::kSwitch,
     .help = "with an IR2Vec vocabulary: whether resets compute the module embedding",
     .get = [](const O& o) -> V { return o.moduleEmbeddings; },
     .set = assign([](O& o, V& v) { o.moduleEmbeddings = on(v); })},
    {.keyword = "delete_flags", .flag = "--delete-flag", .kind = OptionKind::kTexts,
     .help = "drop this flag from recompile commands",
     .get = [](const O& o) -> V { return o.flagRules.deleteFlags; },
     .set = assign([](O& o, V& v) { o.flagRules.deleteFlags = std::move(texts(v)); })},
    {.keyword = "replace_flags", .flag = "--replace-flag", .kind = OptionKind::kTexts,
     .help = "FLAG=VALUE in recompile commands", .get = getReplaceFlags, .set = setReplaceFlags},
    {.keyword = "add_flags", .flag = "--add-flag", .kind = OptionKind::kTexts,
     .help = "append this argument to recompile commands",
     .get = [](const O& o) -> V { return o.flagRules.addFlags; },
     .set = assign([](O& o, V& v) { o.flagRules.addFlags = std::move(texts(v)); })},
};

} // namespace

std::string_view optionKindName(OptionKind kind) {
  switch (kind) {
  case OptionKind::kText: return "text";
  case OptionKind::kPath: return "path";
  case OptionKind::kCount: return "count";
  case OptionKind::kSeconds: return "seconds";
  case OptionKind::kSwitch: return "switch";
  case OptionKind::kTexts: return "texts";
  }
  return "?";
}

std::span<const EnvironmentOptionSpec> environmentOptionTable() { return kTable; }

const EnvironmentOptionSpec* findEnvironmentOption(std::string_view keyword) {
  if (keyword.empty())
    return nullptr;
  auto* found = std::find_if(std::begin(kTable), std::end(kTable),
                             [&](const auto& spec) { return spec.keyword == keyword; });
  return found == std::end(kTable) ? nullptr : found;
}

EnvironmentOptions defaultEnvironmentOptions() {
  EnvironmentOptions options;
  options.clang = MLGO_DEFAULT_CLANG;
  return options;
}

Status setEnvironmentOption(const EnvironmentOptionSpec& spec, EnvironmentOptions& options,
                            OptionValue value, std::string_view name) {
  Status status = spec.set(options, std::move(value));
  if (!status.ok())
    return status.error().withContext(name);
  return status;
}

Status checkEnvironmentOptions(const EnvironmentOptions& options) {
  return corpus::validateFlagRules(options.flagRules);
}

} // namespace mlgo::env
