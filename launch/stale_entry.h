//===- launch/stale_entry.h - a changed module's unchanged call sites -*- C++ -*-===//
///
/// \file
/// Private to launch/: the stale route of a tuned launch (tuned_launch.h).
///
/// An inlining decision never changes what a program does, only its size:
/// clang accepts either answer to any call site it asks about. So when a
/// module's stream is no longer the recorded one (an edit anywhere in the
/// module changes at least the module-wide features of every decision), the
/// launcher may still give its unchanged call sites their tuned answers. Each
/// decision has a site key (stream_identity.h: its identity bytes without the
/// module-wide features and the caller's); an entry records the key of every
/// decision. The
/// k-th decision of the compile with key K gets the action of the k-th
/// recorded decision with key K; a key the entry does not have (new or
/// changed code, or a call site whose callee or caller changed), or one past
/// its recorded occurrences, gets the launch's fallback (clang's own
/// `inlining_default`, or the policy). Register allocation has no stale
/// route: an eviction index is only meaningful for the exact stream.
///
/// Errors are values: a module index or entries file that is malformed is
/// kInvalidArgument naming the file (the compile fails, as for the exact
/// route), one that cannot be read kIo. Single-threaded; findStaleEntry()
/// reads the index and at most one entries file.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_STALE_ENTRY_H
#define MLGO_LAUNCH_STALE_ENTRY_H

#include "indexed_entry.h"
#include "mlgo/launch/tuned_launch.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mlgo::launch {

/// One module's entry, answering decisions by their site keys (see the file
/// comment). Counts what it answered.
class StaleAnswers {
public:
  /// `entry` must hold a site key per decision.
  explicit StaleAnswers(TuningEntry entry);

  const TuningEntry& entry() const { return entry_; }

  /// The first `steps` decisions were answered in the recorded order and
  /// their keys were the entry's first ones: they count as answered from the
  /// entry, and as occurrences of their keys.
  void skip(size_t steps);
  /// The recorded action for the next decision, whose site key is `key`;
  /// none when the entry has no further decision with that key. Counts it.
  std::optional<uint8_t> next(uint64_t key);
  /// The action next() just gave was refused by the problem's rules: that
  /// decision counts as not answered from the entry.
  void refused() { --fromEntry_; }

  uint64_t decisions() const { return decisions_; }
  uint64_t fromEntry() const { return fromEntry_; }

private:
  TuningEntry entry_;
  /// Each key's recorded decisions (their indices), in order.
  std::unordered_map<uint64_t, std::vector<uint32_t>> recorded_;
  /// How often each key was asked so far.
  std::unordered_map<uint64_t, uint32_t> asked_;
  uint64_t decisions_ = 0;
  uint64_t fromEntry_ = 0;
};

/// What findStaleEntry() found: an entry with site keys, or why none.
using StaleLookup = IndexLookup;

/// The entry for a compile of `objectPath` at `optLevel`, reading the
/// profile `profile`, when its first decision found none: findIndexedEntry()'s
/// (indexed_entry.h), when it has site keys. None (with why) as there, and
/// for an entry without site keys (older tables).
Result<StaleLookup> findStaleEntry(const TuningTable& table, std::string_view objectPath,
                                   std::string_view optLevel, std::string_view profile);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_STALE_ENTRY_H
