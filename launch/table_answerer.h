//===- launch/table_answerer.h - one compile answered from a table -*- C++ -*-===//
///
/// \file
/// Private to launch/: the answerer of a tuned launch (tuned_launch.h): it
/// looks the module up at the first decision, replays its entry, answers
/// the stale route by site key, or hands over to the fallback; with an
/// entry that has priorities (found before the compile, indexed_entry.h) it
/// also answers clang's priority channel (channel 1 of the session).
///
/// The priority route: the first question is a priority, and priority
/// questions then interleave with the evictions (each eviction is followed
/// by the priorities of the ranges it requeues). The k-th priority question of function f gets the
/// `weight` fallback's priority times the entry's multiplier for (f, k)
/// (env::PriorityAnswerer, as the environment answered it while tune
/// searched); the first eviction question must hash to the entry's `first`,
/// the eviction stream to its `stream`, and the compile must ask exactly the
/// recorded number of evictions and priority questions. An entry with
/// priorities that the first eviction finds in a compile started without
/// the priority channel (the object path did not name it) does not apply:
/// its evictions were recorded under its priorities. Anything else is a
/// departure: rerun() (priorities change no program's meaning, only which
/// registers it gets, so what was answered before is harmless; the rerun
/// gives the build the fallback's object).
///
/// Single-threaded, like the compile it serves. Errors (a bad table file, a
/// fallback policy that does not fit) fail the compile; a departure only
/// sets rerun().
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_TABLE_ANSWERER_H
#define MLGO_LAUNCH_TABLE_ANSWERER_H

#include "answering.h"
#include "stale_entry.h"

#include "mlgo/env/fixed_priorities.h"
#include "mlgo/launch/tuned_launch.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::launch {

/// The session channel clang's priority questions arrive on.
inline constexpr size_t kPriorityChannel = 1;

class TableAnswerer {
public:
  /// `profile`: the compile's profile identity (profile_identity.h), named
  /// `profileName` in messages; `object`: the object it writes
  /// (indexed_entry.h); `joint`: what the module index gave for the object
  /// (regalloc): an entry with priorities when the compile was started with
  /// the priority channel for it, else none and why. `tuned` must outlive
  /// the answerer.
  TableAnswerer(const env::Problem& problem, const TunedLaunch& tuned, std::string profile,
                std::string profileName, std::string object, IndexLookup joint = {});

  /// Answers one request of either channel.
  Status answer(env::CompilerSession& session, const env::Observation& observation);

  /// After the stream ended: whether a replay matched the entry throughout
  /// (or, with site keys, by site: stale_entry.h).
  void checkEnd();

  bool rerun() const { return rerun_; }
  /// Whether the compiler asked anything at all.
  bool asked() const { return rules_ != nullptr || priorityAnswers() > 0; }
  bool tuned() const { return entry_.has_value() && !rerun_ && !stale_; }
  /// Some decisions were answered from an entry by their site keys.
  bool stale() const { return stale_ && !rerun_ && stale_->fromEntry() > 0; }
  const StaleAnswers* staleAnswers() const { return stale_ ? &*stale_ : nullptr; }
  /// Priority questions answered from the entry.
  uint64_t priorityAnswers() const { return priorities_ ? priorities_->answered() : 0; }
  std::string why() const;
  std::string module() const;

private:
  Status start(env::CompilerSession& session, const env::Observation& observation);
  std::string keepApplicable(std::vector<TuningEntry>& entries) const;
  std::string dropJoint(std::vector<TuningEntry>& entries) const;
  Status replay(env::CompilerSession& session, const env::Observation& observation);
  Status answerWith(env::CompilerSession& session, const env::ActionValue& action);
  Status answerFallback(env::CompilerSession& session, const env::Observation& observation);
  Status answerPriority(env::CompilerSession& session, const env::Observation& observation);
  bool staleAllowed() const;
  Status startStale();
  Status answerStale(env::CompilerSession& session, const env::Observation& observation);
  void departOrStale(uint64_t steps, const std::string& why);
  void depart(const std::string& why);

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
  std::optional<TuningEntry> joint_;  ///< The entry whose priorities are answered.
  std::string jointWhy_;              ///< Why the module index gave none.
  std::optional<env::PriorityAnswerer> priorities_;
  std::vector<std::byte> advice_;
  bool rerun_ = false;
  std::string why_;
};

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_TABLE_ANSWERER_H
