//===- launch/launcher.cc - a policy inside a real build --------------------===//
#include "mlgo/launch/launcher.h"

#include "mlgo/env/compiler_session.h"
#include "mlgo/env/problem.h"
#include "mlgo/support/temp_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mlgo::launch {
namespace {

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
Status answerAll(env::CompilerSession& session, Answerer& answerer) {
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
LaunchOutcome failed(const env::CompilerSession& session, const std::string& source,
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

} // namespace

Result<LaunchOutcome> runInteractive(const LaunchOptions& options, const std::string& source,
                                     const policy::Policy& policy, support::CleanupScope& scope) {
  auto problem = env::findProblem(options.problem.empty() ? policy.problem() : options.problem);
  if (!problem.ok())
    return problem.error();
  MLGO_TRY(policy.checkProblem((*problem)->name()));
  if (options.command.empty())
    return makeError(ErrorCode::kInvalidArgument, "launch: no compiler command");

  // A launcher killed outright (SIGKILL) cannot remove its directory; the
  // next compile does, once that launcher's process is gone.
  support::TempDir::reapOrphans(options.tempDir);
  auto dir = support::TempDir::create(scope, "mlgo-env-launch-", options.tempDir);
  if (!dir.ok())
    return LaunchOutcome{1, dir.error().withContext(source), 0};
  env::CompileCommand command;
  command.channelBase = dir->path() / "channel";
  command.argv = options.command;
  for (std::string& arg :
       (*problem)->interactiveArgs(command.channelBase.string(), env::ProblemOptions{}))
    command.argv.push_back(std::move(arg));
  command.inheritOutput = true;
  env::SessionLimits limits;
  limits.compileTimeout = options.compileTimeout;
  limits.maxObservations = options.maxObservations;
  limits.scope = &scope;
  auto session = env::startCompilerSession(std::move(*dir), std::move(command), limits);
  if (!session.ok())
    return LaunchOutcome{1, session.error().withContext(source), 0};

  Answerer answerer(**problem, policy);
  if (Status st = answerAll(**session, answerer); !st.ok()) {
    (*session)->abort(); // A policy that does not fit leaves the compiler waiting.
    return failed(**session, source, st.error());
  }
  auto report = (*session)->finish();
  if (!report.ok()) {
    LaunchOutcome outcome = failed(**session, source, report.error());
    // A compile that ended with the compiler's own error (it printed why)
    // before any decision: the build sees just that, as without a launcher.
    auto exit = (*session)->exitStatus();
    if (exit && exit->exited && outcome.observations == 0)
      outcome.error.reset();
    return outcome;
  }
  return LaunchOutcome{report->exit.code, std::nullopt, report->observations};
}

Status runPassThrough(std::span<const std::string> command) {
  if (command.empty() || command[0].empty())
    return makeError(ErrorCode::kInvalidArgument, "launch: no compiler command");
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const std::string& arg : command)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  int error = errno;
  return makeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot run '{}': {}",
                   command[0], std::strerror(error));
}

} // namespace mlgo::launch
