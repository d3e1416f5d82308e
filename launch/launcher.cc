//===- launch/launcher.cc - a policy inside a real build --------------------===//
#include "mlgo/launch/launcher.h"

#include "answering.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/problem.h"
#include "mlgo/support/temp_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mlgo::launch {

Started startInteractive(const LaunchOptions& options, const env::Problem& problem,
                         const std::string& source, support::CleanupScope& scope,
                         const env::Problem* priorityProblem) {
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
       problem.interactiveArgs(command.channelBase.string(), env::ProblemOptions{}))
    command.argv.push_back(std::move(arg));
  if (priorityProblem != nullptr) {
    command.extraChannels.push_back(dir->path() / "priority");
    for (std::string& arg : priorityProblem->interactiveArgs(
             command.extraChannels.back().string(), env::ProblemOptions{}))
      command.argv.push_back(std::move(arg));
  }
  command.inheritOutput = true;
  env::SessionLimits limits;
  limits.compileTimeout = options.compileTimeout;
  limits.maxObservations = options.maxObservations;
  limits.scope = &scope;
  auto session = env::startCompilerSession(std::move(*dir), std::move(command), limits);
  if (!session.ok())
    return LaunchOutcome{1, session.error().withContext(source), 0};
  return std::move(*session);
}

LaunchOutcome finishOutcome(env::CompilerSession& session, const std::string& source) {
  auto report = session.finish();
  if (!report.ok()) {
    LaunchOutcome outcome = failed(session, source, report.error());
    // A compile that ended with the compiler's own error (it printed why)
    // before any decision: the build sees just that, as without a launcher.
    auto exit = session.exitStatus();
    if (exit && exit->exited && outcome.observations == 0)
      outcome.error.reset();
    return outcome;
  }
  return LaunchOutcome{report->exit.code, std::nullopt, report->observations};
}

Result<LaunchOutcome> runInteractive(const LaunchOptions& options, const std::string& source,
                                     const policy::Policy& policy, support::CleanupScope& scope) {
  auto problem = env::findProblem(options.problem.empty() ? policy.problem() : options.problem);
  if (!problem.ok())
    return problem.error();
  MLGO_TRY(policy.checkProblem((*problem)->name()));
  if (options.command.empty())
    return makeError(ErrorCode::kInvalidArgument, "launch: no compiler command");
  Started started = startInteractive(options, **problem, source, scope);
  if (auto* outcome = std::get_if<LaunchOutcome>(&started))
    return *outcome;
  auto& session = *std::get<std::unique_ptr<env::CompilerSession>>(started);
  Answerer answerer(**problem, policy);
  if (Status st = answerAll(session, answerer); !st.ok()) {
    session.abort(); // A policy that does not fit leaves the compiler waiting.
    return failed(session, source, st.error());
  }
  return finishOutcome(session, source);
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
