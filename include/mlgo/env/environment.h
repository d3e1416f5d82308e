//===- mlgo/env/environment.h - the gym-style environment -------*- C++ -*-===//
///
/// \file
/// The in-process environment the server wraps: one problem, one corpus, one
/// clang, many concurrent episodes.
///
///   auto env = Environment::create(options);          // probes clang
///   auto first = env->reset({.module = "sha256.o"});  // or sampled
///   StepResult step = first->step;
///   while (!step.terminated && !step.truncated)
///     env->step(first->episode, action(step.observation), step);
///   // step.reward, step.summary->policyScore / defaultScore ...
///
/// Episodes. One episode is one compile of one module with the agent
/// answering each decision. reset() starts clang and returns its first
/// decision request. A module that makes no decision (e.g. built at -O0)
/// ends at reset() with `terminated` and its reward, when it was requested
/// by name (its episode id is then never open); a sampled one is skipped,
/// remembered, and another module is sampled. A sampled module that fails
/// (e.g. corrupt bitcode) is reported as the error of that reset(). An
/// invalid action is rejected (kInvalidArgument naming the rule) without
/// reaching clang, and the episode stays where it was. With `maxSteps`,
/// the step that reaches it finishes the compile with the problem's
/// fallback policy and returns `truncated` with the reward. An episode
/// that ends - terminated, truncated or failed - is gone: later calls with
/// its id get kNotFound.
///
/// Compile path: the register allocation problems make every decision in
/// codegen, after the IR optimisation pipeline, which never depends on
/// them. Their episodes therefore compile each module's optimised IR, made
/// once (clang `-emit-llvm-bc -emit-llvm-uselists`), kept in the
/// optimised-IR cache beside the baseline cache (optimized_ir_cache.h) and
/// compiled with `-disable-llvm-optzns`: the same code as a full compile at
/// about half the cost. A module's first reset builds it (or finds it built
/// by another process sharing the cache); the default score is computed on
/// the same path, so the default policy still scores reward 0. A module
/// whose optimisation fails fails its reset (kCompiler naming the module
/// and the step). That first reset blocks for the build (a job slot, then
/// the optimising compile, each bounded by the compile timeout) or, when
/// another episode builds the module, until it is done; reset's `stop`
/// interrupts either wait like any other (below): the compile is killed and
/// reaped, its partial output removed, nothing is cached, and the next
/// reset builds again. ThinLTO modules and driver commands are compiled in
/// full.
/// EnvironmentOptions::fullCompile turns the path off.
///
/// Forks. EpisodeOptions::actions replays a recorded prefix: the episode
/// answers clang's first k = actions.size() decisions itself, each checked
/// like an agent's action against the request it answers, and reset()
/// returns decision k (the k+1-th) for the agent; if the compile ends
/// first, reset() returns `terminated` with the reward, and the summary's
/// prefixSteps says how many were used. clang is deterministic, so decision
/// k is what an agent stepping actions[0..k) by hand would see. A prefix
/// action that breaks the problem's rule fails the reset with
/// kInvalidArgument naming its index ("actions[3]: ..."; hosts report it as
/// an invalid action) and nothing of the episode remains. The prefix runs
/// in one go on one job slot; maxSteps counts the agent's steps after it.
///
/// Rewards: 0 on intermediate steps; on the final step
/// relativeReward(policy score, default score) (score.h), where the
/// default score comes from a plain compile with the same flags, cached on
/// disk (baseline_cache.h) and, on a first visit, computed concurrently with
/// the interactive compile.
///
/// Failures end the episode with an error naming the episode and module:
/// kCompiler (clang crashed, was killed, rejected the module), kTimeout
/// (compile timeout, or no job slot became free within it), kNotFound
/// (clang or module missing). A failed episode releases everything at once:
/// its clang, directory, fifos, descriptors and its maxEpisodes place.
/// Other episodes are unaffected.
///
/// Compilers: every compile, probe and score goes through
/// EnvironmentOptions::driver (compiler_driver.h): real clang processes by
/// default, an in-process fake in unit tests.
///
/// Concurrency: every member function is thread-safe. Calls on one episode
/// are serialised; calls on different episodes run in parallel. At most
/// `jobs` compilers work at a time (see job slots in env/job_slots.h); a
/// compiler waiting for its agent holds no slot. Destroying the Environment
/// kills every live compiler and waits for background baseline compiles to
/// stop.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_ENVIRONMENT_H
#define MLGO_ENV_ENVIRONMENT_H

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/sampler.h"
#include "mlgo/env/problem.h"
#include "mlgo/protocol/tensor_spec.h"
#include "mlgo/support/interrupt.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::support {
class CleanupScope;
} // namespace mlgo::support

namespace mlgo::env {

class CompilerDriver; // compiler_driver.h

struct EnvironmentOptions {
  /// "inlining", "regalloc" or "regalloc-priority".
  std::string problem = "inlining";
  /// Corpus directory; empty = the bundled demo corpus for the problem.
  std::filesystem::path corpus;
  /// The clang to drive; empty = "clang-22" from PATH.
  std::filesystem::path clang;
  /// Baseline cache directory; empty = BaselineCache::defaultDir().
  std::filesystem::path cacheDir;
  /// False: baselines are kept in memory only, and the optimised IR in a
  /// temporary directory of the environment's own (under tempDir).
  bool useDiskCache = true;
  /// Register allocation problems: compile every episode (and baseline) in
  /// full, from the corpus bitcode, instead of from the module's cached
  /// optimised IR (see the file comment). Same scores, about twice the
  /// cost; for checking the fast path, or corpora it does not suit.
  bool fullCompile = false;
  /// Compilers working at once; 0 = the number of hardware threads.
  unsigned jobs = 0;
  /// Open episodes at once (each holds a live clang process).
  size_t maxEpisodes = 1024;
  /// Host time waiting on one compiler (see compiler_session.h).
  std::chrono::milliseconds compileTimeout{std::chrono::minutes(10)};
  /// Decision requests one compile may make.
  uint64_t maxObservations = 4'000'000;
  ProblemOptions problemOptions;
  corpus::SamplerOptions sampler;
  corpus::FlagRules flagRules;
  /// Parent of per-compile temporary directories; empty = $TMPDIR or /tmp.
  std::filesystem::path tempDir;
  /// An IR2Vec vocabulary (LLVM's JSON; empty = off). Every reset then
  /// carries the module's embedding (ResetResult::moduleEmbedding), and for
  /// inlining clang adds the features `callee_embedding` / `caller_embedding`
  /// computed with the same file. create() fails on an unreadable or
  /// malformed vocabulary, naming the entry.
  std::filesystem::path ir2vecVocabulary;
  /// regalloc only: a priorities file (fixed_priorities.h). Episodes of the
  /// modules it lists also serve clang's priority channel, answered by the
  /// host from the file; the agent answers the evictions. create() fails on
  /// an unreadable or malformed file, or another problem. Empty = off.
  std::filesystem::path fixedPriorities;
  /// With a vocabulary: whether resets compute the module embedding (traces
  /// do not need it; it costs about 4 ms per module on first visit).
  bool moduleEmbeddings = true;
  /// Where the environment registers its compilers, temporary directories
  /// and cache entries being written (support/cleanup_scope.h): the
  /// command line hands down the scope its signal handling cleans up. The
  /// Environment holds a reference, so the scope lives at least as long.
  /// Null = a scope of the Environment's own, which nobody else can clean
  /// up (tests, the Python binding: destroying the Environment is their
  /// cleanup). One scope may serve several runs; cleaning it up stops them
  /// all, so give independent Environments scopes of their own.
  std::shared_ptr<support::CleanupScope> cleanup;
  /// Runs every compile, probe and score (compiler_driver.h); null = the
  /// real one, processCompilerDriver(). Tests pass an in-process fake.
  std::shared_ptr<CompilerDriver> driver;
};

/// What an agent needs to know before its first episode.
struct EnvironmentDescription {
  std::string problem;
  std::string summary;
  /// Specs of the features in every observation, in order (from clang's
  /// header; `inlining_default` only when asked for).
  std::vector<protocol::TensorSpec> observationSpecs;
  /// Byte offset of each feature in AgentObservation::bytes.
  std::vector<size_t> observationOffsets;
  /// The action tensor; always set.
  std::optional<protocol::TensorSpec> actionSpec;
  std::string actionRule;
  /// Where StepResult::defaultAction comes from (BoundProblem::
  /// defaultDecisionSource): `clang-default:<feature>`,
  /// `host-emulation-v2:default-eviction`, or empty (none).
  std::string defaultActionSource;
  std::string rewardDefinition;
  std::filesystem::path corpusRoot;
  size_t corpusModules = 0;
  std::filesystem::path clangPath;
  std::string clangVersion;
  unsigned jobs = 0;
  std::filesystem::path cacheDir; ///< Empty when the disk cache is off.
  /// Episodes compile cached optimised IR (the file comment); where it is.
  bool optimizedIr = false;
  std::filesystem::path optimizedIrDir;
  /// The IR2Vec vocabulary in use (absolute; empty when off), its dimension,
  /// and the entities it lacks (LLVM embeds them as zeros).
  std::filesystem::path ir2vecVocabulary;
  unsigned ir2vecDimension = 0;
  std::vector<std::string> ir2vecMissingEntities;
};

/// The features the agent sees, copied out of clang's stream.
struct AgentObservation {
  std::string context;          ///< Module ("") or function name.
  int64_t id = 0;               ///< Observation number within the context.
  std::vector<std::byte> bytes; ///< Visible tensors concatenated, spec order.
};

/// Scores of one context (function) on the final step.
struct ContextScore {
  std::string name;
  double policy = 0;
  std::optional<double> baseline; ///< Absent if the default compile lacks it.
};

/// What the final step of an episode reports.
struct EpisodeSummary {
  double policyScore = 0;
  double defaultScore = 0;
  std::vector<ContextScore> contexts; ///< Regalloc problems: per function.
  uint64_t observations = 0;          ///< Decisions clang asked for.
  uint64_t agentSteps = 0;            ///< Answered by the agent.
  uint64_t fallbackSteps = 0;         ///< Answered by the fallback policy.
  uint64_t prefixSteps = 0;           ///< Answered from EpisodeOptions::actions.
  /// Priority questions the host answered (EnvironmentOptions::fixedPriorities);
  /// `observations` counts them too.
  uint64_t priorityAnswers = 0;
  bool channelOpened = false;         ///< False: clang never asked anything.
  bool baselineCached = false;        ///< Default score came from the cache.
  double compileSeconds = 0;          ///< Wall time of the interactive compile.
  double compilerCpuSeconds = 0;      ///< clang's CPU time.
  double hostWaitSeconds = 0;         ///< Time spent waiting on clang.
};

struct StepResult {
  /// The next decision request (meaningless once terminated or truncated).
  AgentObservation observation;
  double reward = 0;
  bool terminated = false;
  bool truncated = false;
  /// The default decision for this request, when known: clang's own
  /// (inlining) or the host emulation (regalloc); see
  /// EnvironmentDescription::defaultActionSource.
  std::optional<ActionValue> defaultAction;
  /// What the fallback policy would answer.
  std::optional<ActionValue> fallbackAction;
  /// Set on the final step.
  std::optional<EpisodeSummary> summary;
};

struct EpisodeOptions {
  /// Agent steps after which the episode is truncated (fallback finishes).
  std::optional<uint64_t> maxSteps;
  /// A prefix of decisions the episode answers itself before the agent's
  /// first (a fork; see "Forks" above). Empty = none.
  std::vector<ActionValue> actions = {};
};

struct ResetRequest {
  /// Module name from the corpus; empty = sampled.
  std::string module;
  /// Reseeds the sampler first (gymnasium semantics).
  std::optional<uint64_t> seed;
  EpisodeOptions options;
};

using EpisodeId = uint64_t;

/// What episodes of a module compile (Environment::prepareModule).
struct PreparedModule {
  /// The module's optimised-IR twin (its bitcode in the optimised-IR cache,
  /// its arguments with `-disable-llvm-optzns`), or the corpus module itself
  /// when compiled in full. Valid as long as the Environment.
  const corpus::ModuleSpec* spec = nullptr;
  bool optimizedIr = false; ///< spec is the twin.
  bool built = false;       ///< This call compiled the optimised IR.
};

/// Where a non-blocking step (Environment::beginStep) stands.
enum class StepProgress : uint8_t {
  kDone,     ///< The result is filled in, as step() would have.
  kWaiting,  ///< The compiler has the action: wait for the descriptor.
  kMustBlock ///< The rest may wait: finish on a thread that may block.
};

struct ResetResult {
  EpisodeId episode = 0;
  std::string module;
  StepResult step;
  /// With an IR2Vec vocabulary (and moduleEmbeddings): the module's embedding, the sum of the
  /// IR2Vec vectors of its function definitions (ir2vec::Embedder::
  /// moduleVector; symbolic kind, LLVM's default weights) over the corpus
  /// bitcode, i.e. before clang optimises it. Computed once per module and
  /// shared.
  std::shared_ptr<const std::vector<double>> moduleEmbedding;
};

class Environment {
public:
  /// Opens the corpus, queries and probes clang for the problem, opens the
  /// cache. Errors name what is wrong (unknown problem, missing clang,
  /// unsupported problem, bad corpus, unusable cache directory).
  static Result<std::unique_ptr<Environment>> create(const EnvironmentOptions& options);

  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  const EnvironmentDescription& describe() const;
  const corpus::Corpus& corpus() const;
  const Problem& problem() const;
  /// The scope everything of this environment is registered in
  /// (EnvironmentOptions::cleanup, or its own); lives as long as it.
  support::CleanupScope& cleanupScope() const;

  /// Starts an episode (see the file comment).
  ///
  /// `stop` (reset, step, finishStep): a check the call asks at least every
  /// support::kInterruptSlice while it waits (for a job slot, clang, the
  /// default compile, a module's first optimised-IR build), on the calling
  /// thread (support/interrupt.h). Once it returns true the call stops
  /// within a slice: the episode fails with kInterrupted and its compiler
  /// is killed and reaped. Null = no check (the waits then never wake
  /// early). The check must not call into this Environment's episode.
  Result<ResetResult> reset(const ResetRequest& request,
                            const support::InterruptCheck* stop = nullptr);
  /// Answers the episode's pending decision with `action`; `result` gets
  /// the next request or the final outcome. Reuses `result`'s buffers.
  Status step(EpisodeId episode, const ActionValue& action, StepResult& result,
              const support::InterruptCheck* stop = nullptr);
  /// step() split for hosts that wait on many compilers from one thread
  /// (the server's I/O threads), none of the three calls waiting for a
  /// compiler or a job slot (only for the episode's lock, held by other
  /// calls on the same episode for as long as they take):
  ///  - beginStep() validates `action` (errors as step()). kMustBlock:
  ///    nothing happened (no job slot free right now, the step reaches
  ///    maxSteps, or the compiler cannot be polled): call step() instead.
  ///    Otherwise the action reached the compiler and the episode holds a
  ///    job slot: kWaiting, with `fd` set to the compiler's stream
  ///    descriptor (owned by the environment, valid until the step ends:
  ///    register a dup() of it, never close it).
  ///  - on kWaiting, once `fd` is readable (or hung up), pollStep():
  ///    kDone, kWaiting again, or kMustBlock;
  ///  - on kMustBlock from pollStep() (the compile is ending and must be
  ///    scored), or when the wait runs long, finishStep() blocks for the
  ///    rest as step() would, the compile timeout counting from the answer.
  /// A begun step must be finished by pollStep() or finishStep() (or the
  /// episode closed): until then step()/beginStep() on the episode get
  /// kBusy. Errors end the episode as they do for step().
  Result<StepProgress> beginStep(EpisodeId episode, const ActionValue& action, int& fd);
  Result<StepProgress> pollStep(EpisodeId episode, StepResult& result);
  Status finishStep(EpisodeId episode, StepResult& result,
                    const support::InterruptCheck* stop = nullptr);
  /// Ends an episode early, killing its compiler. kNotFound if unknown.
  Status close(EpisodeId episode);

  /// For a host that is exiting: kills every compiler of this environment
  /// now (SIGKILL, stopped or stuck ones included), so every call waiting on
  /// a compiler, a job slot or a default compile returns within milliseconds
  /// with an error, and makes later resets fail (kIo, "shutting down").
  /// Episodes stay registered until closed or the environment is destroyed.
  /// Does not wait for calls in progress. Idempotent, thread-safe.
  void shutdown();

  /// What episodes of `module` compile, made ready now: for the register
  /// allocation problems (unless fullCompile), its optimised IR is loaded
  /// and validated, or built and cached; otherwise the corpus module itself.
  /// Blocks while building (a job slot, the compile timeout); not
  /// interruptible (no `stop`: only shutdown() ends the build early).
  /// kNotFound for an unknown module; build errors name the module.
  Result<PreparedModule> prepareModule(std::string_view module);

  /// Episodes currently open.
  size_t openEpisodes() const;
  /// The clang process of an open episode (diagnostics, fault injection).
  std::optional<pid_t> compilerPid(EpisodeId episode) const;

private:
  struct Impl;
  explicit Environment(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_ENVIRONMENT_H
