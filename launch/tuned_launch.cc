//===- launch/tuned_launch.cc - a tuning table inside a real build ----------===//
#include "mlgo/launch/tuned_launch.h"

#include "answering.h"
#include "stale_entry.h"
#include "tuned_support.h"
#include "mlgo/launch/profile_identity.h"
#include "mlgo/table/stream_identity.h"
#include "mlgo/support/subprocess.h"

#include <algorithm>

namespace mlgo::launch {
namespace {

/// Why no entry of the table can apply to a compile reading `files`, whose
/// profile identity goes to `profile`; empty when one may. An unreadable
/// profile is the compiler's to report: the compile runs plainly.
std::string profileMismatch(const ProfileFiles& files, const TuningManifest& manifest,
                            std::string& profile) {
  auto identity = profileIdentity(files);
  if (!identity.ok())
    return identity.error().message();
  profile = std::move(*identity);
  if (!manifest.profiles || manifest.profiles->empty() ||
      std::binary_search(manifest.profiles->begin(), manifest.profiles->end(), profile))
    return {};
  std::string tunedWith;
  for (const std::string& p : *manifest.profiles)
    tunedWith += (tunedWith.empty() ? "" : ", ") + describeProfile(p);
  return fmt::format("profile changed: the table's modules were tuned with {}, this compile "
                     "reads {} ({})",
                     tunedWith, files.describe(),
                     describeProfile(profile));
}

/// Answers one compile from the table (see the header): looks the module up
/// at the first decision, replays it, or hands over to the fallback.
class TableAnswerer {
public:
  /// `profile`: the compile's profile identity (profile_identity.h), named
  /// `profileName` in messages; `object`: the object it writes (stale_entry.h).
  TableAnswerer(const env::Problem& problem, const TunedLaunch& tuned, std::string profile,
                std::string profileName, std::string object)
      : problem_(problem), tuned_(tuned), profile_(std::move(profile)),
        profileName_(std::move(profileName)), object_(std::move(object)) {
    if (tuned.fallback)
      policyAnswerer_.emplace(problem, *tuned.fallback);
  }

  /// An error is a failure of the compile (a bad table file, a fallback
  /// policy that does not fit); a departure only sets rerun().
  Status answer(env::CompilerSession& session, const env::Observation& observation) {
    if (!rules_) {
      MLGO_TRY(start(session, observation)); // hashes the first observation
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

  /// After the stream ended: whether a replay matched the entry throughout
  /// (or, with site keys, by site: stale_entry.h).
  void checkEnd() {
    if (!entry_ || rerun_ || stale_)
      return;
    uint64_t count = identity_->count();
    if (count != entry_->actions.size())
      departOrStale(count, fmt::format("{} decisions, {} recorded", count,
                                       entry_->actions.size()));
    else if (identity_->whole() != entry_->stream)
      departOrStale(count, "the compiler's stream differs from the tuned one");
  }

  bool rerun() const { return rerun_; }
  /// Whether the compiler asked anything at all.
  bool asked() const { return rules_ != nullptr; }
  bool tuned() const { return entry_.has_value() && !rerun_ && !stale_; }
  /// Some decisions were answered from an entry by their site keys.
  bool stale() const { return stale_ && !rerun_ && stale_->fromEntry() > 0; }
  const StaleAnswers* staleAnswers() const { return stale_ ? &*stale_ : nullptr; }
  std::string why() const {
    if (stale_ && !stale())
      return why_ + "; no call site of module '" + stale_->entry().module +
             "' is in this compile";
    return why_;
  }
  std::string module() const {
    return entry_ ? entry_->module : stale_ ? stale_->entry().module : std::string();
  }

private:
  Status start(env::CompilerSession& session, const env::Observation& observation) {
    auto rules = problem_.bind(*session.header(), env::ProblemOptions{});
    if (!rules.ok())
      return rules.error();
    rules_ = *rules;
    auto identity =
        StreamIdentity::create(*session.header(), tuned_.table->manifest().features);
    if (!identity.ok()) {
      why_ = identity.error().message();
      return Status::success();
    }
    identity_.emplace(std::move(*identity));
    identity_->add(observation.tensors);
    auto entries = tuned_.table->lookup(identity_->first());
    if (!entries.ok())
      return entries.error();
    if (entries->empty()) {
      why_ = "no tuned module makes this first decision (a new or changed module, other "
             "flags, or one tune left at clang's own decisions)";
      return Status::success();
    }
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

  /// Keeps the entries tuned at the compile's level with its profile; when
  /// none is left, why.
  std::string keepApplicable(std::vector<TuningEntry>& entries) const {
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

  Status replay(env::CompilerSession& session, const env::Observation& observation) {
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

  Status answerWith(env::CompilerSession& session, const env::ActionValue& action) {
    advice_.resize(rules_->actionSpec().byteSize());
    MLGO_TRY(rules_->encode(action, advice_));
    return session.answer(advice_);
  }

  /// The fallback's answer: the policy's, else clang's own decision.
  Status answerFallback(env::CompilerSession& session, const env::Observation& observation) {
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

  /// Inlining only: any answer to any call site is a correct program.
  bool staleAllowed() const { return tuned_.stale && problem_.name() == "inlining"; }

  /// A first decision that found no entry: the entry of the object's module,
  /// answering by site key, if the table has one.
  Status startStale() {
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

  Status answerStale(env::CompilerSession& session, const env::Observation& observation) {
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
  void departOrStale(uint64_t steps, const std::string& why) {
    if (!staleAllowed() || entry_->sites.empty())
      return depart(why);
    stale_.emplace(*entry_);
    stale_->skip(steps);
    why_ = "module '" + entry_->module + "' departs from its tuned stream: " + why;
  }

  void depart(const std::string& why) {
    rerun_ = true;
    why_ = "module '" + entry_->module + "' departs from its tuned decisions: " + why;
  }

  const env::Problem& problem_;
  const TunedLaunch& tuned_;
  std::string profile_;
  std::string profileName_;
  std::string object_;
  std::optional<Answerer> policyAnswerer_;
  std::shared_ptr<const env::BoundProblem> rules_;
  std::optional<StreamIdentity> identity_;
  std::optional<TuningEntry> entry_;
  std::optional<StaleAnswers> stale_; ///< Answering by site key (stale_entry.h).
  std::vector<std::byte> advice_;
  bool rerun_ = false;
  std::string why_;
};

/// Runs the compiler as the build asked, without the launcher's flags.
LaunchOutcome runPlain(const LaunchOptions& options, const std::string& source,
                       support::CleanupScope& scope) {
  support::SpawnOptions spawn;
  spawn.argv = options.command;
  spawn.inheritOutput = true;
  auto child = support::Subprocess::spawn(scope, spawn);
  if (!child.ok())
    return LaunchOutcome{127, child.error().withContext(source), 0};
  Status waited = (*child)->waitUntil(support::Clock::now() + options.compileTimeout);
  if (!waited.ok()) {
    (*child)->kill();
    return LaunchOutcome{1, waited.error().withContext(source), 0};
  }
  const auto& exit = *(*child)->exitStatus();
  if (!exit.exited)
    return LaunchOutcome{1, makeError(ErrorCode::kIo, "{}: the compiler was {}", source,
                                      exit.describe()),
                         0};
  return LaunchOutcome{exit.code, std::nullopt, 0};
}

/// The compile again, from the start, with the fallback.
Result<LaunchOutcome> runFallback(const LaunchOptions& options, const std::string& source,
                                  const TunedLaunch& tuned, support::CleanupScope& scope) {
  if (tuned.fallback)
    return runInteractive(options, source, *tuned.fallback, scope);
  return runPlain(options, source, scope);
}

/// The interactive compile with the table answering; reruns when it must.
Result<TunedOutcome> answerFromTable(const LaunchOptions& options, const env::Problem& problem,
                                     const std::string& source, const TunedLaunch& tuned,
                                     const ProfileFiles& files, const std::string& profile,
                                     support::CleanupScope& scope) {
  TunedOutcome result;
  Started started = startInteractive(options, problem, source, scope);
  if (auto* outcome = std::get_if<LaunchOutcome>(&started)) {
    result.outcome = *outcome;
    return result;
  }
  auto session = std::move(std::get<std::unique_ptr<env::CompilerSession>>(started));
  TableAnswerer answerer(problem, tuned, profile, files.describe(),
                         objectPathOf(tuned.output, source));
  env::Observation observation;
  for (;;) {
    auto event = session->next(observation);
    Status st = event.ok() ? Status::success() : Status(event.error());
    if (st.ok() && *event == env::SessionEvent::kEnd)
      break;
    if (st.ok())
      st = answerer.answer(*session, observation);
    if (!st.ok()) {
      session->abort();
      result.outcome = failed(*session, source, st.error());
      return result;
    }
    if (answerer.rerun())
      break;
  }
  if (answerer.rerun()) {
    session->abort();
    session.reset();
  } else {
    result.outcome = finishOutcome(*session, source);
    answerer.checkEnd();
  }
  result.why = answerer.why();
  result.module = answerer.module();
  if (answerer.rerun() && !result.outcome.error) {
    auto again = runFallback(options, source, tuned, scope);
    if (!again.ok())
      return again.error();
    result.outcome = *again;
    return result;
  }
  result.tuned = answerer.tuned();
  result.stale = answerer.stale();
  if (const StaleAnswers* stale = answerer.staleAnswers()) {
    result.fromEntry = stale->fromEntry();
    result.decisions = stale->decisions();
  }
  if (!answerer.asked())
    result.why.clear(); // Nothing to decide (no call site, or clang never asked): plain.
  return result;
}

} // namespace

Result<TunedOutcome> runTuned(const LaunchOptions& options, const std::string& source,
                              const TunedLaunch& tuned, support::CleanupScope& scope) {
  if (!tuned.table)
    return makeError(ErrorCode::kInvalidArgument, "launch: no tuning table");
  auto problem = env::findProblem(tuned.table->manifest().problem);
  if (!problem.ok())
    return problem.error();
  if (tuned.fallback)
    MLGO_TRY(tuned.fallback->checkProblem((*problem)->name()));
  if (options.command.empty())
    return makeError(ErrorCode::kInvalidArgument, "launch: no compiler command");
  TunedOutcome result;
  std::string mismatch =
      compilerMismatch(options.command[0], tuned.table->manifest().compiler, scope);
  std::span<const std::string> args(options.command.begin() + 1, options.command.end());
  ProfileFiles files = profileFiles(args);
  std::string profile;
  if (mismatch.empty())
    mismatch = profileMismatch(files, tuned.table->manifest(), profile);
  if (!mismatch.empty()) {
    auto outcome = runFallback(options, source, tuned, scope);
    if (!outcome.ok())
      return outcome.error();
    result.outcome = *outcome;
    result.why = mismatch;
  } else {
    auto answered = answerFromTable(options, **problem, source, tuned, files, profile, scope);
    if (!answered.ok())
      return answered.error();
    result = std::move(*answered);
  }
  result.note = appendLog(tuned, source, result);
  return result;
}

} // namespace mlgo::launch
