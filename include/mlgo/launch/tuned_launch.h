//===- mlgo/launch/tuned_launch.h - a tuning table inside a real build -*- C++ -*-===//
///
/// \file
/// `mlgo-env-launch --tuning=DIR [--policy=FALLBACK] -- COMPILER ARGS...`: a
/// compile the launcher takes (compile_args.h) runs in interactive mode, and
/// the first decision the compiler asks about tells which module it is:
///
/// 1. The compiler must be the table's (tuning_table.h): same resolved path,
///    size and modification time, or else the same `--version` first line.
/// 2. The stream identity of the first observation (stream_identity.h) looks
///    up the module's entry; several entries with that first observation are
///    told apart by the object path (the entry whose module name shares the
///    most trailing path components with it); entries the path cannot tell
///    apart apply only if they answer alike, else none does. An entry tuned at another optimisation level than the
///    compile's does not apply (the same first decisions at -O2 and -Oz are
///    common; the objects are not the same), nor one tuned with another
///    profile (profile_identity.h: the content of the profile the compile
///    reads, or none; "profile changed"). The profile is hashed once, before
///    the compile: one that no entry was tuned with (the manifest lists them)
///    gets the fallback at once; one that cannot be read gets the plain
///    compile, whose compiler reports it.
/// 3. Found: every decision is answered with the recorded action, each
///    checked by the problem's rules first (an eviction index must be allowed
///    by the mask). At the end the whole stream must hash to the entry's and
///    the decision count match: then the object is the one tune measured.
/// 4. Not found (a new or changed module, other flags, another compiler):
///    the fallback answers, from the first decision: the policy, or clang's
///    own decisions (inlining: the `inlining_default` clang sends, which gives
///    the plain object; regalloc: clang-22 does not send its eviction
///    decision, so the compile is run again without the launcher's flags).
/// 5. Found but departing (more decisions than recorded, a recorded decision
///    the rules refuse, another stream): the compiler is killed and the
///    compile runs again with the fallback, from the start.
/// 6. The stale route (inlining only; `stale`, on by default): an inlining
///    decision never changes what the program does, only its size (clang
///    takes either answer to any call site it asks about), so a module whose
///    stream changed keeps the tuned answers of its unchanged call sites
///    (launch/stale_entry.h). Instead of 4, the module's entry is found by
///    the object path (the module index, same optimisation level and
///    profile); instead of 5, an entry with site keys keeps answering where
///    the stream departs, without a rerun. Each decision is answered by its
///    site key: the k-th decision with a key gets the k-th recorded action
///    with that key; a key the entry does not have (new or changed code) gets
///    the fallback of 4 (clang's `inlining_default`, or the policy: a
///    `--policy` answers exactly the call sites the table does not know). An
///    entry without site keys (older tables) departs or misses as in 4 and 5.
///    Regalloc stays exact or fallback: an eviction index means nothing
///    outside its exact stream.
/// 7. Priorities (regalloc; an entry with `priorities`, tuning_table.h):
///    clang's first question is a priority (priority questions then
///    interleave with the evictions), so the entry must be known before the
///    compile: the module index names it
///    by the object path (same optimisation level and profile). The compile
///    then also opens clang's priority channel; the k-th priority question of
///    function f gets the `weight` fallback's priority (weight x 1000) times
///    the entry's multiplier for (f, k), 1 where it has none, exactly as tune's
///    environment answered while it searched. The first eviction question
///    must hash to the entry's `first` (else 5), the evictions are replayed
///    and checked as in 3, and the compile must ask exactly the recorded
///    number of priority questions (else 5). A compile whose object path names
///    no such entry is answered as in 2-5, without the priority channel.
///
/// A table file that cannot be read or is malformed fails the compile, naming
/// the file: never a silent fallback, never a wrong object. Every other
/// failure is as for a policy launch (launcher.h): the compiler is killed,
/// the fifo directory removed, the message names the source.
///
/// Each compile appends one JSON line to `log` (when set): {"source",
/// "output", "outcome": "tuned" | "stale" | "fallback" | "failed" |
/// "no-decisions" (the compiler asked nothing: its object is the plain one),
/// "module", "why"}, and "linked_into" for a source of a compile-and-link; a
/// stale line also has "from_entry" and "decisions" (the decisions answered
/// from the entry, of all); its "why" says why the exact route did not
/// apply; a stale route that matched no site is a fallback; a tuned line of
/// an entry with priorities has "priorities" (the questions answered).
/// `python -m mlgo_env.tune status` summarises it. The line is written with
/// one write() on an O_APPEND descriptor, so concurrent compiles do not
/// interleave; a log that cannot be written is reported in `note` only.
///
/// Blocks until the compile (and a rerun) has ended; single-threaded.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_TUNED_LAUNCH_H
#define MLGO_LAUNCH_TUNED_LAUNCH_H

#include "mlgo/launch/launcher.h"
#include "mlgo/table/stream_identity.h"
#include "mlgo/table/tuning_table.h"

#include <filesystem>
#include <string>

namespace mlgo::launch {

// The table layer's tuning table and stream identity, as the launcher names them.
using table::CompilerStamp;
using table::StreamIdentity;
using table::TuningEntry;
using table::TuningManifest;
using table::TuningTable;

struct TunedLaunch {
  /// The table; must outlive the call.
  const TuningTable* table = nullptr;
  /// What answers a module the table does not have; null = clang's own.
  const policy::Policy* fallback = nullptr;
  /// The object the compile writes (`-o`), as the build gave it; may be empty.
  /// A source of a compile-and-link (split_call.h): its module's name.
  std::string output;
  /// A source of a compile-and-link: what the call links (logged as
  /// "linked_into"); empty otherwise.
  std::string linkedInto;
  /// The compile's optimisation level (compile_args.h); entries tuned at
  /// another level do not apply.
  std::string optLevel;
  /// Where the compile's line goes; empty = nowhere.
  std::filesystem::path log;
  /// Inlining: answer a changed module's known call sites from its entry
  /// (step 6); false = exact or fallback only.
  bool stale = true;
};

struct TunedOutcome {
  LaunchOutcome outcome;
  /// The compile got the recorded decisions of `module`.
  bool tuned = false;
  /// The compile got `fromEntry` of its `decisions` from `module`'s entry by
  /// site key (step 6); the rest from the fallback.
  bool stale = false;
  uint64_t fromEntry = 0;
  uint64_t decisions = 0;
  /// A tuned compile whose entry has priorities: the priority questions it
  /// answered from the entry (step 7); 0 otherwise.
  uint64_t priorityAnswers = 0;
  std::string module;
  /// Why it fell back, or why the exact route did not apply (empty when tuned).
  std::string why;
  /// A problem with the log, to report (empty when none).
  std::string note;
};

/// Runs one compile with `tuned.table` (see the file comment). Errors
/// (kInvalidArgument) only for a table of a problem the launcher does not
/// know or a fallback policy of another problem; what goes wrong with the
/// compile, including a bad table file, is in the outcome.
Result<TunedOutcome> runTuned(const LaunchOptions& options, const std::string& source,
                              const TunedLaunch& tuned, support::CleanupScope& scope);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_TUNED_LAUNCH_H
