//===- env/episode.cc - one compile answered by an agent -------------------===//
#include "episode.h"

#include <cstring>

namespace mlgo::env {
namespace {

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace

Status Episode::fail(const Error& error) {
  over_ = true;
  pending_ = false;
  inFlight_ = false;
  inFlightLease_.release();
  if (session_)
    session_->abort();
  session_.reset();
  return error.withContext(fmt::format("episode {} (module {})", id_, module_->name));
}

std::optional<pid_t> Episode::pid() const {
  if (!session_)
    return std::nullopt;
  return session_->pid();
}

void Episode::close() {
  over_ = true;
  pending_ = false;
  inFlight_ = false;
  inFlightLease_.release();
  session_.reset();
}

Result<JobSlots::Lease> Episode::acquireSlot(support::Deadline deadline) {
  return acquireInterruptibly(*context_->slots, deadline, &interrupt_);
}

Result<const Result<ModuleScore>*> Episode::awaitBaseline() {
  while (interrupt_.armed() &&
         baseline_.future.wait_for(support::kInterruptSlice) != std::future_status::ready)
    if (interrupt_.requested())
      return makeError(ErrorCode::kInterrupted,
                       "interrupted while waiting for the default compile's score");
  return &baseline_.future.get();
}

Status Episode::start(StepResult& result, const support::InterruptCheck* stop) {
  support::InterruptScope scope(interrupt_, stop);
  // What clang compiles: the module's optimised-IR twin, for problems
  // decided in codegen; the default score comes from the same path. Its
  // first build (one optimising compile, or waiting for another episode's)
  // asks the interrupt too: a yes ends it with kInterrupted, nothing cached.
  const corpus::ModuleSpec* source = module_;
  if (context_->optimizedIr != nullptr) {
    auto prepared = context_->optimizedIr->prepare(*module_, &interrupt_);
    if (!prepared.ok())
      return fail(prepared.error());
    source = prepared->spec;
  }
  auto baseline = context_->baselines->request(*source);
  if (!baseline.ok())
    return fail(baseline.error());
  baseline_ = std::move(*baseline);
  auto planned = context_->planner->interactive(*source);
  if (!planned.ok())
    return fail(planned.error());
  advice_.resize(context_->bound->actionSpec().byteSize());
  if (const FixedPriorities* fixed = context_->planner->fixedPriorities())
    if (const PriorityMultipliers* multipliers = fixed->find(module_->name))
      priorities_.emplace(*multipliers);
  auto lease = acquireSlot(support::Clock::now() + context_->limits.compileTimeout);
  if (!lease.ok())
    return fail(lease.error());
  SessionLimits limits = context_->limits;
  limits.interrupt = &interrupt_;
  auto session = context_->driver->startSession(std::move(planned->dir),
                                                std::move(planned->command), limits);
  if (!session.ok())
    return fail(session.error());
  session_ = std::move(*session);
  return advance(result, *lease);
}

Status Episode::checkHeader() {
  if (headerChecked_)
    return Status::success();
  const protocol::LogHeader* header = session_->header();
  if (header == nullptr || *header != context_->bound->header())
    return makeError(ErrorCode::kCompiler,
                     "clang's header differs from the one it sent when probed: {}",
                     header != nullptr ? header->toJson() : std::string("(none)"));
  headerChecked_ = true;
  return Status::success();
}

void Episode::fillObservation(StepResult& result) const {
  const BoundProblem& bound = *context_->bound;
  const auto& features = bound.header().features;
  AgentObservation& out = result.observation;
  out.context.assign(current_.context);
  out.id = current_.id;
  size_t total = 0;
  for (size_t i : bound.visibleFeatures())
    total += features[i].byteSize();
  // Appended, not resized then copied over: no zero-filling on every step.
  // Tensors adjacent in clang's record are copied as one run (all of them,
  // usually: one copy instead of forty small ones).
  out.bytes.clear();
  out.bytes.reserve(total);
  const std::byte* runStart = nullptr;
  const std::byte* runEnd = nullptr;
  for (size_t i : bound.visibleFeatures()) {
    std::span<const std::byte> t = current_.tensors[i];
    if (runStart && t.data() == runEnd) {
      runEnd += t.size();
      continue;
    }
    if (runStart)
      out.bytes.insert(out.bytes.end(), runStart, runEnd);
    runStart = t.data();
    runEnd = t.data() + t.size();
  }
  if (runStart)
    out.bytes.insert(out.bytes.end(), runStart, runEnd);
  result.reward = 0;
  result.terminated = false;
  result.truncated = false;
  result.defaultAction = bound.defaultDecision(current_);
  result.fallbackAction = bound.fallbackKnowingDefault(current_, result.defaultAction);
  result.summary.reset();
}

Status Episode::advance(StepResult& result, JobSlots::Lease& lease) {
  for (;;) {
    auto event = nextForAgent();
    if (!event.ok())
      return fail(event.error());
    if (*event == SessionEvent::kEnd)
      return complete(result, lease, /*truncated=*/false);
    if (prefixSteps_ == options_.actions.size())
      return present(result, lease);
    MLGO_TRY(answerFromPrefix());
  }
}

Result<SessionEvent> Episode::nextForAgent() {
  for (;;) {
    auto event = session_->next(current_);
    if (!event.ok() || *event == SessionEvent::kEnd || current_.channel == 0)
      return event;
    const protocol::LogHeader* header = session_->channelHeader(current_.channel);
    if (!priorities_ || current_.channel != 1 || header == nullptr)
      return makeError(ErrorCode::kCompiler, "clang asked on channel {}, which this episode "
                                             "does not serve",
                       current_.channel);
    auto advice = priorities_->answer(*header, current_);
    if (!advice.ok())
      return advice.error().withContext("the priority channel");
    MLGO_TRY(session_->answer(*advice));
  }
}

Status Episode::answerFromPrefix() {
  if (auto st = checkHeader(); !st.ok())
    return fail(st.error());
  const BoundProblem& bound = *context_->bound;
  const ActionValue& action = options_.actions[prefixSteps_];
  // Checked like an agent's action; a bad one ends the fork before clang sees it.
  Status valid = bound.validate(current_, action);
  if (valid.ok())
    valid = bound.encode(action, advice_);
  if (!valid.ok())
    return fail(Error(ErrorCode::kInvalidArgument,
                      fmt::format("actions[{}]: {}", prefixSteps_, valid.error().message())));
  if (auto st = session_->answer(advice_); !st.ok())
    return fail(st.error());
  ++prefixSteps_;
  return Status::success();
}

Status Episode::present(StepResult& result, JobSlots::Lease& lease) {
  lease.release(); // clang now waits for the agent.
  if (auto st = checkHeader(); !st.ok())
    return fail(st.error());
  pending_ = true;
  fillObservation(result);
  return Status::success();
}

Status Episode::runFallback(JobSlots::Lease&) {
  const BoundProblem& bound = *context_->bound;
  for (;;) {
    auto event = nextForAgent();
    if (!event.ok())
      return fail(event.error());
    if (*event == SessionEvent::kEnd)
      return Status::success();
    if (auto st = checkHeader(); !st.ok())
      return fail(st.error());
    ActionValue action = bound.fallback(current_);
    if (auto st = bound.encode(action, advice_); !st.ok())
      return fail(st.error());
    if (auto st = session_->answer(advice_); !st.ok())
      return fail(st.error());
    ++fallbackSteps_;
  }
}

Status Episode::validateAndEncode(const ActionValue& action) {
  if (inFlight_)
    return makeError(ErrorCode::kBusy, "episode {} is still answering its previous step", id_);
  if (over_ || !pending_)
    return makeError(ErrorCode::kNotFound, "episode {} has ended", id_);
  const BoundProblem& bound = *context_->bound;
  // Invalid actions never reach clang; the episode stays where it was.
  MLGO_TRY(bound.validate(current_, action));
  return bound.encode(action, advice_);
}

Result<StepProgress> Episode::beginStep(const ActionValue& action, int& fd) {
  MLGO_TRY(validateAndEncode(action));
  fd = session_->streamFd();
  if (fd < 0 || (options_.maxSteps && agentSteps_ + 1 >= *options_.maxSteps))
    return StepProgress::kMustBlock;
  auto lease = context_->slots->acquire(support::Clock::now());
  if (!lease.ok())
    return StepProgress::kMustBlock; // None free now: step() waits for one.
  pending_ = false;
  if (auto st = session_->answer(advice_); !st.ok())
    return fail(st.error()).error();
  ++agentSteps_;
  inFlight_ = true;
  inFlightLease_ = std::move(*lease);
  return StepProgress::kWaiting; // kMustBlock must mean "nothing happened".
}

Result<StepProgress> Episode::pollStep(StepResult& result) {
  if (!inFlight_)
    return makeError(ErrorCode::kInternal, "episode {} has no step in flight", id_);
  auto event = session_->tryNext(current_);
  if (!event.ok())
    return fail(event.error()).error();
  if (!*event)
    return StepProgress::kWaiting;
  if (**event == SessionEvent::kEnd)
    return StepProgress::kMustBlock; // Waiting for clang to exit may take long.
  inFlight_ = false;
  MLGO_TRY(present(result, inFlightLease_));
  return StepProgress::kDone;
}

Status Episode::finishStep(StepResult& result, const support::InterruptCheck* stop) {
  support::InterruptScope scope(interrupt_, stop);
  if (!inFlight_)
    return makeError(ErrorCode::kInternal, "episode {} has no step in flight", id_);
  inFlight_ = false;
  JobSlots::Lease lease = std::move(inFlightLease_);
  return advance(result, lease);
}

Status Episode::step(const ActionValue& action, StepResult& result,
                     const support::InterruptCheck* stop) {
  support::InterruptScope scope(interrupt_, stop);
  MLGO_TRY(validateAndEncode(action));
  auto lease = acquireSlot(support::Clock::now() + context_->limits.compileTimeout);
  // Nothing reached clang, but an agent that retries would only wait again
  // behind the same busy compilers while this one holds a clang, its
  // directory and a --max-episodes place: the episode ends here.
  if (!lease.ok())
    return fail(lease.error());
  pending_ = false;
  if (auto st = session_->answer(advice_); !st.ok())
    return fail(st.error());
  ++agentSteps_;
  if (options_.maxSteps && agentSteps_ >= *options_.maxSteps) {
    MLGO_TRY(runFallback(*lease));
    return complete(result, *lease, /*truncated=*/true);
  }
  return advance(result, *lease);
}

Status Episode::complete(StepResult& result, JobSlots::Lease& lease, bool truncated) {
  auto report = session_->finish();
  lease.release();
  if (!report.ok())
    return fail(report.error());
  auto policy = context_->driver->score(context_->planner->scoreKind(), session_->command());
  if (!policy.ok())
    return fail(policy.error());
  session_.reset(); // Removes the compile's directory.
  auto awaited = awaitBaseline();
  if (!awaited.ok())
    return fail(awaited.error());
  const Result<ModuleScore>& baseline = **awaited;
  if (!baseline.ok())
    return fail(baseline.error());

  EpisodeSummary summary;
  summary.policyScore = policy->total;
  summary.defaultScore = baseline->total;
  for (const auto& [name, score] : policy->contexts) {
    ContextScore context{name, score, std::nullopt};
    for (const auto& [baseName, baseScore] : baseline->contexts)
      if (baseName == name)
        context.baseline = baseScore;
    summary.contexts.push_back(std::move(context));
  }
  summary.observations = report->observations;
  summary.agentSteps = agentSteps_;
  summary.fallbackSteps = fallbackSteps_;
  summary.prefixSteps = prefixSteps_;
  summary.priorityAnswers = priorities_ ? priorities_->answered() : 0;
  summary.channelOpened = report->channelOpened;
  summary.baselineCached = baseline_.cached;
  summary.compileSeconds = seconds(report->wallTime);
  summary.compilerCpuSeconds = seconds(report->compilerCpu);
  summary.hostWaitSeconds = seconds(report->compilerTime);

  result.observation.bytes.clear();
  result.observation.context.clear();
  result.observation.id = 0;
  result.reward = relativeReward(summary.policyScore, summary.defaultScore);
  result.terminated = !truncated;
  result.truncated = truncated;
  result.defaultAction.reset();
  result.fallbackAction.reset();
  result.summary = std::move(summary);
  over_ = true;
  pending_ = false;
  return Status::success();
}

} // namespace mlgo::env
