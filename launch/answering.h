//===- launch/answering.h - answering a compile's decisions -----*- C++ -*-===//
///
/// \file
/// Private to launch/: the policy answerer and the outcome helpers that the
/// policy launch (launcher.cc) and the tuned launch (tuned_launch.cc) share.
/// Single-threaded, like the compile it serves.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_ANSWERING_H
#define MLGO_LAUNCH_ANSWERING_H

#include "mlgo/env/compiler_session.h"
#include "mlgo/env/problem.h"
#include "mlgo/launch/launcher.h"
#include "mlgo/policy/policy_runner.h"

#include <memory>
#include <optional>
#include <variant>
#include <vector>

namespace mlgo::launch {

/// Answers every decision of one compile; the bound rules and policy are
/// made from the header when the first request arrives.
class Answerer {
public:
  Answerer(const env::Problem& problem, const policy::Policy& policy)
      : problem_(problem), policy_(policy) {}

  Status answer(env::CompilerSession& session, const env::Observation& observation) {
    if (!bound_) {
      MLGO_TRY(bindTo(*session.header()));
    }
    int64_t action = bound_->decide(observation.tensors);
    // Never hand clang an answer it would crash on (the runner only picks
    // allowed candidates, but the rules are the environment's to enforce).
    MLGO_TRY(rules_->validate(observation, env::ActionValue(action)));
    advice_.resize(rules_->actionSpec().byteSize());
    MLGO_TRY(rules_->encode(env::ActionValue(action), advice_));
    return session.answer(advice_);
  }

private:
  Status bindTo(const protocol::LogHeader& header) {
    auto rules = problem_.bind(header, env::ProblemOptions{});
    if (!rules.ok())
      return rules.error();
    rules_ = *rules;
    auto bound = policy_.bind(header.features);
    if (!bound.ok())
      return bound.error();
    bound_.emplace(std::move(*bound));
    return Status::success();
  }

  const env::Problem& problem_;
  const policy::Policy& policy_;
  std::shared_ptr<const env::BoundProblem> rules_;
  std::optional<policy::BoundPolicy> bound_;
  std::vector<std::byte> advice_;
};

/// The decisions of one compile, until the stream ends.
inline Status answerAll(env::CompilerSession& session, Answerer& answerer) {
  env::Observation observation;
  for (;;) {
    auto event = session.next(observation);
    if (!event.ok())
      return event.error();
    if (*event == env::SessionEvent::kEnd)
      return Status::success();
    MLGO_TRY(answerer.answer(session, observation));
  }
}

/// The outcome of a compile that did not run to its own end: the message
/// names the source; the exit code is the compiler's when it exited with one.
inline LaunchOutcome failed(const env::CompilerSession& session, const std::string& source,
                     const Error& error) {
  LaunchOutcome outcome;
  outcome.observations = session.observations();
  outcome.exitCode = 1;
  auto exit = session.exitStatus();
  if (exit && exit->exited && exit->code != 0)
    outcome.exitCode = exit->code;
  outcome.error = error.withContext(source);
  return outcome;
}

/// A started interactive compile, or the outcome to return when it could
/// not start (the message names the source).
using Started = std::variant<std::unique_ptr<env::CompilerSession>, LaunchOutcome>;

/// Starts `options.command` with `problem`'s interactive flags, its fifos in
/// a fresh directory registered in `scope` (launcher.cc); with
/// `priorityProblem`, also that problem's channel (the session's channel 1:
/// clang's priority questions beside its evictions).
Started startInteractive(const LaunchOptions& options, const env::Problem& problem,
                         const std::string& source, support::CleanupScope& scope,
                         const env::Problem* priorityProblem = nullptr);

/// Waits for a compile whose decisions were all answered; its outcome.
LaunchOutcome finishOutcome(env::CompilerSession& session, const std::string& source);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_ANSWERING_H
