//===- launch/table_answerer.cc - one compile answered from a table ---------===//
#include "table_answerer.h"

#include "mlgo/launch/profile_identity.h"
#include "mlgo/table/stream_identity.h"

#include <algorithm>

namespace mlgo::launch {

TableAnswerer::TableAnswerer(const env::Problem& problem, const TunedLaunch& tuned,
                             std::string profile, std::string profileName, std::string object,
                             IndexLookup joint)
    : problem_(problem), tuned_(tuned), profile_(std::move(profile)),
      profileName_(std::move(profileName)), object_(std::move(object)),
      joint_(std::move(joint.entry)), jointWhy_(std::move(joint.why)) {
  if (tuned.fallback)
    policyAnswerer_.emplace(problem, *tuned.fallback);
  if (joint_ && joint_->priorities)
    priorities_.emplace(joint_->priorities->multipliers);
}

Status TableAnswerer::answer(env::CompilerSession& session, const env::Observation& observation) {
  if (observation.channel == kPriorityChannel)
    return answerPriority(session, observation);
  if (!rules_) {
    MLGO_TRY(start(session, observation)); // hashes the first observation
    if (rerun_)
      return Status::success();
    if (!entry_ && identity_)
      MLGO_TRY(startStale());
  } else if (entry_ && !stale_) {
    identity_->add(observation.tensors); // a miss hashes nothing more
  }
  if (stale_)
    return answerStale(session, observation);
  if (entry_)
    return replay(session, observation);
  return answerFallback(session, observation);
}

void TableAnswerer::checkEnd() {
  if (rerun_ || stale_)
    return;
  if (joint_ && !entry_)
    return depart("the compiler asked no eviction question");
  if (!entry_)
    return;
  uint64_t count = identity_->count();
  if (count != entry_->actions.size())
    departOrStale(count, fmt::format("{} decisions, {} recorded", count, entry_->actions.size()));
  else if (identity_->whole() != entry_->stream)
    departOrStale(count, "the compiler's stream differs from the tuned one");
  else if (joint_ && priorityAnswers() != joint_->priorities->questions)
    depart(fmt::format("{} priority questions, {} recorded", priorityAnswers(),
                       joint_->priorities->questions));
}

std::string TableAnswerer::why() const {
  if (stale_ && !stale())
    return why_ + "; no call site of module '" + stale_->entry().module +
           "' is in this compile";
  return why_;
}

std::string TableAnswerer::module() const {
  return entry_   ? entry_->module
         : stale_ ? stale_->entry().module
         : joint_ ? joint_->module
                  : std::string();
}

Status TableAnswerer::start(env::CompilerSession& session, const env::Observation& observation) {
  auto rules = problem_.bind(*session.header(), env::ProblemOptions{});
  if (!rules.ok())
    return rules.error();
  rules_ = *rules;
  auto identity = StreamIdentity::create(*session.header(), tuned_.table->manifest().features);
  if (!identity.ok()) {
    why_ = identity.error().message();
    if (joint_)
      depart(why_);
    return Status::success();
  }
  identity_.emplace(std::move(*identity));
  identity_->add(observation.tensors);
  if (joint_) { // found by the object's name before the compile
    if (identity_->first() != joint_->first)
      depart("the first eviction question is not the recorded one");
    else
      entry_ = joint_;
    return Status::success();
  }
  auto entries = tuned_.table->lookup(identity_->first());
  if (!entries.ok())
    return entries.error();
  if (entries->empty()) {
    why_ = "no tuned module makes this first decision (a new or changed module, other "
           "flags, or one tune left at clang's own decisions)";
    return Status::success();
  }
  why_ = dropJoint(*entries);
  if (entries->empty())
    return Status::success();
  why_ = keepApplicable(*entries);
  if (entries->empty())
    return Status::success();
  size_t candidates = entries->size();
  entry_ = chooseEntry(std::move(*entries), object_);
  if (!entry_)
    why_ = fmt::format("{} tuned modules make this first decision and the object path "
                       "'{}' does not tell them apart",
                       candidates, object_);
  return Status::success();
}

/// Drops the entries with priorities (this compile has no priority channel:
/// their evictions were recorded under their priorities); when none is
/// left, why.
std::string TableAnswerer::dropJoint(std::vector<TuningEntry>& entries) const {
  std::string named;
  std::erase_if(entries, [&](const TuningEntry& e) {
    if (e.priorities)
      named = e.module;
    return e.priorities.has_value();
  });
  if (!entries.empty() || named.empty())
    return {};
  return fmt::format("module '{}' was tuned with register priorities, and the object path "
                     "'{}' did not name it before the compile ({})",
                     named, object_, jointWhy_.empty() ? "no module index" : jointWhy_);
}

/// Keeps the entries tuned at the compile's level with its profile; when
/// none is left, why.
std::string TableAnswerer::keepApplicable(std::vector<TuningEntry>& entries) const {
  TuningEntry any = entries.front();
  std::erase_if(entries, [&](const TuningEntry& e) { return e.opt != tuned_.optLevel; });
  if (entries.empty())
    return fmt::format("module tuned at {}, this compile is at {}", any.opt, tuned_.optLevel);
  any = entries.front();
  std::erase_if(entries, [&](const TuningEntry& e) { return e.profile != profile_; });
  if (entries.empty())
    return fmt::format("profile changed: module '{}' was tuned with {}, this compile reads "
                       "{} ({})",
                       any.module, describeProfile(any.profile), profileName_,
                       describeProfile(profile_));
  return {};
}

Status TableAnswerer::replay(env::CompilerSession& session, const env::Observation& observation) {
  uint64_t step = identity_->count() - 1;
  if (staleAllowed() && !entry_->sites.empty() &&
      (step >= entry_->sites.size() ||
       identity_->siteKey(observation.tensors) != entry_->sites[step])) {
    departOrStale(step, fmt::format("decision {} is not the recorded one", step));
    return answerStale(session, observation);
  }
  if (step >= entry_->actions.size()) {
    depart(fmt::format("more decisions than the {} recorded", entry_->actions.size()));
    return Status::success();
  }
  env::ActionValue action(static_cast<int64_t>(entry_->actions[step]));
  if (Status st = rules_->validate(observation, action); !st.ok()) {
    depart(fmt::format("the recorded decision {} is refused: {}", step, st.error().message()));
    return Status::success();
  }
  return answerWith(session, action);
}

Status TableAnswerer::answerWith(env::CompilerSession& session, const env::ActionValue& action) {
  advice_.resize(rules_->actionSpec().byteSize());
  MLGO_TRY(rules_->encode(action, advice_));
  return session.answer(advice_);
}

/// The fallback's answer: the policy's, else clang's own decision.
Status TableAnswerer::answerFallback(env::CompilerSession& session,
                                     const env::Observation& observation) {
  if (policyAnswerer_)
    return policyAnswerer_->answer(session, observation);
  // Only a decision clang itself sends is clang's (regalloc's default may be
  // the host's emulation): without one, the compile runs again plainly.
  auto decision = rules_->defaultDecisionSource().starts_with("clang-default:")
                      ? rules_->defaultDecision(observation)
                      : std::nullopt;
  if (!decision) {
    rerun_ = true;
    return Status::success();
  }
  return answerWith(session, *decision);
}

/// A priority question: the entry's answer while the count holds, else a
/// departure (so is a priority channel the environment's rules refuse).
Status TableAnswerer::answerPriority(env::CompilerSession& session,
                                     const env::Observation& observation) {
  const protocol::LogHeader* header = session.channelHeader(kPriorityChannel);
  if (!priorities_ || header == nullptr)
    return makeError(ErrorCode::kCompiler,
                     "the compiler asked a priority on channel {} of a compile started "
                     "without one",
                     kPriorityChannel);
  if (priorities_->answered() >= joint_->priorities->questions) {
    depart(fmt::format("more priority questions than the {} recorded",
                       joint_->priorities->questions));
    return Status::success();
  }
  auto advice = priorities_->answer(*header, observation);
  if (!advice.ok()) {
    depart("the priority channel: " + advice.error().message());
    return Status::success();
  }
  return session.answer(*advice);
}

/// Inlining only: any answer to any call site is a correct program.
bool TableAnswerer::staleAllowed() const {
  return tuned_.stale && problem_.name() == "inlining";
}

/// A first decision that found no entry: the entry of the object's module,
/// answering by site key, if the table has one.
Status TableAnswerer::startStale() {
  if (!staleAllowed())
    return Status::success();
  auto found = findStaleEntry(*tuned_.table, object_, tuned_.optLevel, profile_);
  if (!found.ok())
    return found.error();
  if (found->entry)
    stale_.emplace(std::move(*found->entry));
  else
    why_ += "; by the object's name: " + found->why;
  return Status::success();
}

Status TableAnswerer::answerStale(env::CompilerSession& session,
                                  const env::Observation& observation) {
  if (auto recorded = stale_->next(identity_->siteKey(observation.tensors))) {
    env::ActionValue action(static_cast<int64_t>(*recorded));
    if (rules_->validate(observation, action).ok())
      return answerWith(session, action);
    stale_->refused();
  }
  return answerFallback(session, observation);
}

/// The first `steps` decisions matched the entry's site keys: from here
/// on the entry answers by site (with keys), else the compile runs again.
void TableAnswerer::departOrStale(uint64_t steps, const std::string& why) {
  if (!staleAllowed() || entry_->sites.empty())
    return depart(why);
  stale_.emplace(*entry_);
  stale_->skip(steps);
  why_ = "module '" + entry_->module + "' departs from its tuned stream: " + why;
}

void TableAnswerer::depart(const std::string& why) {
  rerun_ = true;
  why_ = "module '" + module() + "' departs from its tuned decisions: " + why;
}

} // namespace mlgo::launch
