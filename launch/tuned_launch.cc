//===- launch/tuned_launch.cc - a tuning table inside a real build ----------===//
#include "mlgo/launch/tuned_launch.h"

#include "answering.h"
#include "indexed_entry.h"
#include "table_answerer.h"
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

/// A regalloc compile's entry with priorities, found by the object's name
/// in the module index (the compile then opens the priority channel); no
/// entry otherwise, with why when the index was read.
Result<IndexLookup> jointEntry(const env::Problem& problem, const TunedLaunch& tuned,
                               const std::string& object, const std::string& profile) {
  if (problem.name() != "regalloc")
    return IndexLookup{};
  auto found = findIndexedEntry(*tuned.table, object, tuned.optLevel, profile);
  if (!found.ok())
    return found.error();
  if (found->entry && !found->entry->priorities) {
    found->why = "module '" + found->entry->module + "' has no priorities";
    found->entry.reset();
  }
  return std::move(*found);
}

/// Starts the compile, with the priority channel when `joint` has an entry.
Result<Started> startTableCompile(const LaunchOptions& options, const env::Problem& problem,
                                  const std::string& source, const IndexLookup& joint,
                                  support::CleanupScope& scope) {
  const env::Problem* priorityProblem = nullptr;
  if (joint.entry) {
    auto found = env::findProblem("regalloc-priority");
    if (!found.ok())
      return found.error();
    priorityProblem = *found;
  }
  return startInteractive(options, problem, source, scope, priorityProblem);
}

/// Serves the compile's requests until its stream ends or the answerer
/// departs; false (with the failed outcome in `result`) when it failed.
bool answerUntilEnd(env::CompilerSession& session, TableAnswerer& answerer,
                    const std::string& source, TunedOutcome& result) {
  env::Observation observation;
  for (;;) {
    auto event = session.next(observation);
    Status st = event.ok() ? Status::success() : Status(event.error());
    if (st.ok() && *event == env::SessionEvent::kEnd)
      return true;
    if (st.ok())
      st = answerer.answer(session, observation);
    if (!st.ok()) {
      session.abort();
      result.outcome = failed(session, source, st.error());
      return false;
    }
    if (answerer.rerun())
      return true;
  }
}

/// What the answerer did, into `result` (a compile that ran to its end).
void takeAnswers(const TableAnswerer& answerer, TunedOutcome& result) {
  result.tuned = answerer.tuned();
  result.stale = answerer.stale();
  result.priorityAnswers = result.tuned ? answerer.priorityAnswers() : 0;
  if (const StaleAnswers* stale = answerer.staleAnswers()) {
    result.fromEntry = stale->fromEntry();
    result.decisions = stale->decisions();
  }
  if (!answerer.asked())
    result.why.clear(); // Nothing to decide (no call site, or clang never asked): plain.
}

/// The interactive compile with the table answering; reruns when it must.
Result<TunedOutcome> answerFromTable(const LaunchOptions& options, const env::Problem& problem,
                                     const std::string& source, const TunedLaunch& tuned,
                                     const ProfileFiles& files, const std::string& profile,
                                     support::CleanupScope& scope) {
  TunedOutcome result;
  std::string object = objectPathOf(tuned.output, source);
  auto joint = jointEntry(problem, tuned, object, profile);
  if (!joint.ok()) {
    result.outcome = LaunchOutcome{1, joint.error().withContext(source), 0};
    return result;
  }
  auto started = startTableCompile(options, problem, source, *joint, scope);
  if (!started.ok())
    return started.error();
  if (auto* outcome = std::get_if<LaunchOutcome>(&*started)) {
    result.outcome = *outcome;
    return result;
  }
  auto session = std::move(std::get<std::unique_ptr<env::CompilerSession>>(*started));
  TableAnswerer answerer(problem, tuned, profile, files.describe(), object, std::move(*joint));
  if (!answerUntilEnd(*session, answerer, source, result))
    return result;
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
  takeAnswers(answerer, result);
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
