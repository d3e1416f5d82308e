//===- trace/trace_verifier.cc - replaying a trace against clang ------------===//
#include "mlgo/trace/trace_verifier.h"

#include "mlgo/env/score.h"
#include "mlgo/trace/log_reader.h"
#include "mlgo/trace/trace_header.h"
#include "module_verifier.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace mlgo::trace {

std::string Divergence::message() const {
  std::string out = fmt::format("module {}, context {}", module, context);
  if (observation)
    fmt::format_to(std::back_inserter(out), ", observation {}", *observation);
  if (!feature.empty())
    fmt::format_to(std::back_inserter(out), ", {} '{}'", element ? "feature" : "tensor", feature);
  if (element)
    fmt::format_to(std::back_inserter(out), " element {}", *element);
  fmt::format_to(std::back_inserter(out), ": {}", what);
  if (!expected.empty() || !actual.empty())
    fmt::format_to(std::back_inserter(out), " (trace: {}; replay: {})", expected, actual);
  return out;
}

namespace {

Result<std::string> problemFromHeader(const protocol::LogHeader& header,
                                      const TraceMetadata& metadata) {
  if (!metadata.problem.empty())
    return metadata.problem;
  const std::string& last = header.features.empty() ? std::string() : header.features.back().name();
  if (last == "inlining_decision")
    return std::string("inlining");
  if (last == "index_to_evict")
    return std::string("regalloc");
  if (last == "priority")
    return std::string("regalloc-priority");
  return makeError(ErrorCode::kInvalidArgument,
                   "cannot tell the problem of this log: its header has no 'problem' and its last "
                   "feature '{}' is not a decision; pass --problem",
                   last);
}

/// Reads the trace, groups it by module, and verifies modules on worker
/// threads while reading goes on.
class Verifier final : public LogVisitor {
public:
  explicit Verifier(const VerifyOptions& options) : options_(options) {}
  ~Verifier() override { stopWorkers(); }

  Status header(const protocol::LogHeader& header, std::string_view line) override;
  Status context(std::string_view name) override;
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override;
  Status outcome(int64_t id, std::span<const std::byte> score) override;

  /// After reading: verifies the last module and waits for every worker.
  Result<VerifyReport> finish();
  /// Waits for the workers; `discard` drops the modules not started yet.
  void stopWorkers(bool discard = false);

private:
  Status startEnvironment(const protocol::LogHeader& header, const TraceMetadata& metadata);
  Status flushModule();
  void work();

  const VerifyOptions& options_;
  protocol::LogHeader header_;
  std::unique_ptr<env::Environment> environment_;
  std::vector<std::string> sortedModules_;
  VerifyReport report_;

  // Reading side.
  std::optional<RecordedModule> current_;
  std::string context_, function_;
  std::set<std::string> seenModules_;
  size_t positions_ = 0;

  // Work queue and verdicts.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<RecordedModule> queue_;
  bool closed_ = false;
  size_t firstBad_ = SIZE_MAX; ///< Position of the earliest divergence or error.
  std::map<size_t, ModuleVerdict> verdicts_;
  std::vector<std::jthread> workers_;
};

Status Verifier::startEnvironment(const protocol::LogHeader& header,
                                  const TraceMetadata& metadata) {
  if (header.features.empty())
    return makeError(ErrorCode::kInvalidArgument, "the trace has no features");
  auto problem = problemFromHeader(header, metadata);
  if (!problem.ok())
    return problem.error();
  env::EnvironmentOptions envOptions = options_.environment;
  if (options_.problemGiven && envOptions.problem != *problem)
    return makeError(ErrorCode::kInvalidArgument, "--problem {} but the trace is for {}",
                     envOptions.problem, *problem);
  envOptions.problem = *problem;
  // Compile as the trace did unless told otherwise: same corpus, same
  // recompile rules, and the vocabulary the embedding features came from.
  if (envOptions.corpus.empty())
    envOptions.corpus = metadata.corpus;
  if (envOptions.flagRules.empty())
    envOptions.flagRules = metadata.flagRules;
  if (envOptions.ir2vecVocabulary.empty())
    envOptions.ir2vecVocabulary = metadata.ir2vecVocabulary;
  envOptions.moduleEmbeddings = false;
  envOptions.problemOptions.includeDefaultFeature =
      header.featureIndex("inlining_default").has_value();
  auto environment = env::Environment::create(envOptions);
  if (!environment.ok())
    return environment.error();
  environment_ = std::move(*environment);
  const env::EnvironmentDescription& d = environment_->describe();
  std::vector<protocol::TensorSpec> traced(header.features.begin(), header.features.end() - 1);
  if (traced != d.observationSpecs || header.features.back() != *d.actionSpec) {
    std::string want, have;
    for (const auto& s : d.observationSpecs)
      want += s.name() + " ";
    for (const auto& s : header.features)
      have += s.name() + " ";
    return makeError(ErrorCode::kInvalidArgument,
                     "the trace's features do not match what clang sends for {}: the trace has "
                     "[{}], clang sends [{}] then the action {}",
                     *problem, have, want, d.actionSpec->toJson());
  }
  report_.problem = *problem;
  for (const auto& module : environment_->corpus().modules())
    sortedModules_.push_back(module.name);
  std::sort(sortedModules_.begin(), sortedModules_.end());
  for (unsigned i = 0; i < std::max(1u, d.jobs); ++i)
    workers_.emplace_back([this] { work(); });
  return Status::success();
}

Status Verifier::header(const protocol::LogHeader& header, std::string_view line) {
  header_ = header;
  auto metadata = readTraceMetadata(line);
  if (!metadata.ok())
    return metadata.error();
  return startEnvironment(header, *metadata);
}

Status Verifier::context(std::string_view name) {
  auto split = splitContextName(name, sortedModules_);
  if (!split)
    return makeError(ErrorCode::kNotFound, "context '{}' names no module of corpus {}", name,
                     environment_->corpus().root().string());
  context_.assign(name);
  function_ = split->second;
  if (current_ && current_->module == split->first)
    return Status::success();
  MLGO_TRY(flushModule());
  if (!seenModules_.insert(split->first).second)
    return makeError(ErrorCode::kInvalidArgument,
                     "module {} appears again after other modules: a trace keeps each module's "
                     "records together",
                     split->first);
  current_.emplace();
  current_->module = split->first;
  current_->position = positions_++;
  return Status::success();
}

Status Verifier::observation(int64_t id, std::span<const std::span<const std::byte>> tensors) {
  RecordedObservation rec;
  rec.context = context_;
  rec.function = function_;
  rec.id = id;
  for (size_t i = 0; i + 1 < tensors.size(); ++i)
    rec.features.insert(rec.features.end(), tensors[i].begin(), tensors[i].end());
  rec.action.assign(tensors.back().begin(), tensors.back().end());
  current_->observations.push_back(std::move(rec));
  return Status::success();
}

Status Verifier::outcome(int64_t, std::span<const std::byte> score) {
  current_->observations.back().outcome.emplace(score.begin(), score.end());
  return Status::success();
}

Status Verifier::flushModule() {
  if (!current_)
    return Status::success();
  std::unique_lock lock(mutex_);
  size_t limit = 2 * workers_.size();
  changed_.wait(lock, [&] { return queue_.size() < limit || firstBad_ != SIZE_MAX; });
  if (current_->position < firstBad_)
    queue_.push_back(std::move(*current_));
  current_.reset();
  changed_.notify_all();
  return Status::success();
}

void Verifier::work() {
  for (;;) {
    RecordedModule module;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      module = std::move(queue_.front());
      queue_.pop_front();
      if (module.position > firstBad_)
        continue;
    }
    ModuleVerdict verdict = verifyModule(*environment_, header_, module);
    std::lock_guard lock(mutex_);
    if (!std::holds_alternative<ModuleVerified>(verdict))
      firstBad_ = std::min(firstBad_, module.position);
    verdicts_.emplace(module.position, std::move(verdict));
    changed_.notify_all();
  }
}

void Verifier::stopWorkers(bool discard) {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    if (discard)
      queue_.clear();
  }
  changed_.notify_all();
  workers_.clear(); // Joins.
}

Result<VerifyReport> Verifier::finish() {
  MLGO_TRY(flushModule());
  stopWorkers();
  for (auto& [position, verdict] : verdicts_) {
    if (auto* ok = std::get_if<ModuleVerified>(&verdict)) {
      ++report_.modules;
      report_.observations += ok->observations;
      report_.outcomes += ok->outcomes;
      report_.defaultTotal += ok->defaultScore;
      report_.policyTotal += ok->policyScore;
      report_.moduleRewardSum += env::relativeReward(ok->policyScore, ok->defaultScore);
    } else if (auto* d = std::get_if<Divergence>(&verdict)) {
      report_.divergence = *d;
      break;
    } else {
      return std::get<Error>(verdict);
    }
  }
  return report_;
}

} // namespace

Result<VerifyReport> verifyTrace(const VerifyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Verifier verifier(options);
  Status read = readLog(options.trace, verifier);
  if (!read.ok()) {
    verifier.stopWorkers(/*discard=*/true);
    return read.error();
  }
  auto report = verifier.finish();
  if (report.ok())
    report->wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace mlgo::trace
