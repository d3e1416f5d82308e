//===- trace/trace_runner.cc - writing a trace -------------------------------===//
#include "mlgo/trace/trace_runner.h"

#include "dev_mode_probe.h"
#include "mlgo/corpus/command_line.h"
#include "mlgo/env/score.h"
#include "mlgo/trace/trace_header.h"
#include "module_tracer.h"
#include "trace_file.h"
#include "training_log_tracer.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace mlgo::trace {
namespace {

double cpuSeconds(int who) {
  struct rusage usage = {};
  getrusage(who, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

Result<std::filesystem::path> corpusRoot(const env::EnvironmentOptions& options) {
  if (!options.corpus.empty())
    return options.corpus;
  auto problem = env::findProblem(options.problem);
  if (!problem.ok())
    return problem.error();
  return corpus::defaultDemoCorpusDir((*problem)->demoCorpusVariant());
}

constexpr size_t kSpareBuffers = 4;

/// Shared state of one run: the queue of modules and the ordered writer.
class Run {
public:
  Run(const TraceOptions& options, env::Environment& environment, std::vector<size_t> selection,
      TracePolicy policy, protocol::LogHeader header, TraceFiles& files, TraceReport& report,
      TraceListener* listener)
      : options_(options), environment_(environment), selection_(std::move(selection)),
        policy_(std::move(policy)), header_(std::move(header)), files_(files), report_(report),
        listener_(listener) {}

  void work();
  const std::optional<Error>& writeError() const { return writeError_; }

private:
  Result<TracedModule> traceOne(const std::string& module);
  void finished(size_t position, Result<TracedModule> result);

  const TraceOptions& options_;
  env::Environment& environment_;
  std::vector<size_t> selection_;
  TracePolicy policy_;
  protocol::LogHeader header_;
  TraceFiles& files_;
  TraceReport& report_;
  TraceListener* listener_;

  std::mutex mutex_;
  std::condition_variable progress_;
  size_t nextToStart_ = 0;
  size_t nextToWrite_ = 0;
  std::map<size_t, Result<TracedModule>> ready_;
  std::optional<Error> writeError_;
  std::vector<std::string> spare_; ///< Written records buffers, for reuse.
};

Result<TracedModule> Run::traceOne(const std::string& module) {
  if (policy_.source == PolicySource::kTrainingLog)
    return traceModuleFromTrainingLog(environment_, module, options_.environment, header_);
  std::string buffer;
  {
    std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      buffer = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  return traceModule(environment_, module, policy_, header_, std::move(buffer));
}

void Run::work() {
  size_t window =
      options_.window != 0 ? options_.window : 4 * std::max(1u, environment_.describe().jobs);
  for (;;) {
    size_t position;
    {
      std::unique_lock lock(mutex_);
      progress_.wait(lock, [&] {
        return nextToStart_ >= selection_.size() || writeError_ ||
               nextToStart_ < nextToWrite_ + window;
      });
      if (nextToStart_ >= selection_.size() || writeError_)
        return;
      position = nextToStart_++;
    }
    const std::string& module = environment_.corpus().modules()[selection_[position]].name;
    finished(position, traceOne(module));
  }
}

void Run::finished(size_t position, Result<TracedModule> result) {
  std::lock_guard lock(mutex_);
  const std::string& name = environment_.corpus().modules()[selection_[position]].name;
  if (listener_ != nullptr)
    listener_->moduleFinished(name, result.ok() ? result->observations : 0,
                              result.ok() ? std::string() : result.error().message());
  ready_.emplace(position, std::move(result));
  while (!ready_.empty() && ready_.begin()->first == nextToWrite_) {
    auto node = ready_.extract(ready_.begin());
    const std::string& module = environment_.corpus().modules()[selection_[node.key()]].name;
    Result<TracedModule>& traced = node.mapped();
    if (!traced.ok()) {
      report_.failures.push_back({module, traced.error().message()});
    } else if (!writeError_) {
      if (auto st = files_.append(traced->records, traced->csv); !st.ok())
        writeError_ = st.error();
      ++report_.done;
      report_.withoutDecisions += traced->observations == 0;
      report_.observations += traced->observations;
      report_.contexts += traced->contexts;
      report_.defaultTotal += traced->defaultScore;
      report_.policyTotal += traced->policyScore;
      report_.moduleRewardSum += env::relativeReward(traced->policyScore, traced->defaultScore);
      // Reusing written buffers spares the page faults of growing new ones.
      if (spare_.size() < kSpareBuffers)
        spare_.push_back(std::move(traced->records));
    }
    ++nextToWrite_;
  }
  progress_.notify_all();
}

} // namespace

Result<std::vector<SelectedModule>> selectedModules(const TraceOptions& options,
                                                    const std::string& objectPlaceholder) {
  auto root = corpusRoot(options.environment);
  if (!root.ok())
    return root.error();
  auto corpus = corpus::Corpus::open(*root);
  if (!corpus.ok())
    return corpus.error();
  auto selection = selectModules(*corpus, options.selection);
  if (!selection.ok())
    return selection.error();
  std::vector<SelectedModule> modules;
  std::string clang = options.environment.clang.empty() ? std::string("clang-22")
                                                        : options.environment.clang.string();
  for (size_t i : *selection) {
    const corpus::ModuleSpec& spec = corpus->modules()[i];
    auto args = corpus::recompileArgs(spec, objectPlaceholder, options.environment.flagRules);
    if (!args.ok())
      return args.error();
    SelectedModule module{spec.name, {clang}};
    module.plainCompile.insert(module.plainCompile.end(), args->begin(), args->end());
    modules.push_back(std::move(module));
  }
  return modules;
}

namespace {

/// What a run needs before its first module.
struct Prepared {
  std::unique_ptr<env::Environment> environment;
  TracePolicy policy;
  protocol::LogHeader header;
  std::vector<size_t> selection;
};

/// Creates the environment and, for problems whose default clang does not
/// stream, probes for a development-mode clang at the same time.
Result<Prepared> prepare(const TraceOptions& options, const env::EnvironmentOptions& envOptions,
                         TraceReport& report) {
  auto problem = env::findProblem(envOptions.problem);
  if (!problem.ok())
    return problem.error();
  // Validates --policy before anything runs.
  MLGO_TRY(resolvePolicy(**problem, options.policy, envOptions.problemOptions, false));
  bool namedPolicy = options.policy.empty() || options.policy == "default";
  bool probe = (*problem)->name() != "inlining" && namedPolicy;
  std::filesystem::path clang = envOptions.clang.empty() ? "clang-22" : envOptions.clang;
  std::optional<Result<DevelopmentModeProbe>> probed;
  std::optional<Result<std::unique_ptr<env::Environment>>> created;
  {
    std::jthread prober;
    if (probe)
      prober = std::jthread([&] {
        probed.emplace(
            probeDevelopmentMode(*envOptions.cleanup, clang, **problem, envOptions.compileTimeout));
      });
    created.emplace(env::Environment::create(envOptions));
  }
  if (!created->ok())
    return created->error();
  std::optional<protocol::LogHeader> developmentLog;
  if (probed) {
    if (!probed->ok())
      return probed->error();
    const DevelopmentModeProbe& result = **probed;
    report.developmentProbe = (result.supported ? "yes: " : "no: ") + result.detail;
    if (result.supported) {
      auto header = traceHeaderFromTrainingLog(*result.header);
      if (!header.ok())
        return header.error();
      developmentLog = std::move(*header);
    }
  }
  Prepared prepared;
  prepared.environment = std::move(**created);
  auto policy = resolvePolicy(**problem, options.policy, envOptions.problemOptions,
                              developmentLog.has_value(),
                              prepared.environment->describe().defaultActionSource);
  if (!policy.ok())
    return policy.error();
  prepared.policy = std::move(*policy);
  MLGO_TRY(prepared.policy.bind(prepared.environment->describe()));
  auto selection = selectModules(prepared.environment->corpus(), options.selection);
  if (!selection.ok())
    return selection.error();
  prepared.selection = std::move(*selection);
  const env::EnvironmentDescription& description = prepared.environment->describe();
  prepared.header = prepared.policy.source == PolicySource::kTrainingLog
                        ? *developmentLog
                        : makeTraceHeader(description.observationSpecs, *description.actionSpec);
  return prepared;
}

} // namespace

Result<TraceReport> runTrace(const TraceOptions& options, TraceListener* listener) {
  auto start = std::chrono::steady_clock::now();
  double selfStart = cpuSeconds(RUSAGE_SELF);
  double childStart = cpuSeconds(RUSAGE_CHILDREN);
  if (options.output.empty())
    return makeError(ErrorCode::kInvalidArgument, "--output is required");
  env::EnvironmentOptions envOptions = options.environment;
  envOptions.problemOptions.includeDefaultFeature = true;
  envOptions.moduleEmbeddings = false; // A trace records clang's features only.
  // The run's scope: the caller's, else one of its own. Declared before
  // everything registered in it, so it is destroyed after them.
  std::shared_ptr<support::CleanupScope> scope =
      envOptions.cleanup ? envOptions.cleanup : std::make_shared<support::CleanupScope>();
  envOptions.cleanup = scope;
  TraceReport report;
  auto prepared = prepare(options, envOptions, report);
  if (!prepared.ok())
    return prepared.error();
  env::Environment& envRef = *prepared->environment;
  const env::EnvironmentDescription& description = envRef.describe();
  protocol::LogHeader& header = prepared->header;
  auto& policy = prepared->policy;
  auto& selection = prepared->selection;
  TraceMetadata metadata{std::string(description.problem),
                         policy.name,
                         description.actionSpec->name(),
                         description.ir2vecVocabulary.string(),
                         description.corpusRoot.string(),
                         envOptions.flagRules};
  auto files =
      TraceFiles::create(*scope, options.output, options.csv, traceHeaderLine(header, metadata));
  if (!files.ok())
    return files.error();

  report.problem = description.problem;
  report.policy = policy.name;
  report.output = options.output;
  report.csv = files->csvPath();
  report.selected = selection.size();
  if (listener != nullptr)
    listener->started(selection.size());

  Run run(options, envRef, std::move(selection), std::move(policy), header, *files, report,
          listener);
  {
    std::vector<std::jthread> workers;
    for (unsigned i = 0; i < std::max(1u, description.jobs); ++i)
      workers.emplace_back([&run] { run.work(); });
  }
  if (run.writeError())
    return *run.writeError();
  auto bytes = files->commit();
  if (!bytes.ok())
    return bytes.error();
  report.traceBytes = *bytes;
  prepared->environment.reset(); // Stops background baseline compiles before measuring.
  report.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.hostCpuSeconds = cpuSeconds(RUSAGE_SELF) - selfStart;
  report.childCpuSeconds = cpuSeconds(RUSAGE_CHILDREN) - childStart;
  return report;
}

} // namespace mlgo::trace
