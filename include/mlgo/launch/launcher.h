//===- mlgo/launch/launcher.h - a policy inside a real build -----*- C++ -*-===//
///
/// \file
/// `mlgo-env launch --policy=FILE [--problem=P] -- COMPILER ARGS...`: a
/// compiler launcher in the style of ccache. A compile it takes
/// (compile_args.h) runs as
///
///     COMPILER ARGS... -mllvm <the problem's interactive flags, channel B>
///
/// with the policy (mlgo/policy/policy_runner.h) answering every decision over the
/// fifo pair B.in/B.out, in a private 0700 directory (the environment's
/// compiler session, mlgo/env/compiler_session.h). Nothing else changes: the
/// compiler writes the object the build asked for, its stdout and stderr are
/// the build's (inherited, not copied), its exit code is the launcher's. A
/// call it does not take is exec()ed unchanged (runPassThrough).
///
/// Failures fail that compile, never the build's other calls, and never
/// hang it: a policy that does not fit the compiler's features, a compiler
/// that dies, a stream that breaks, more than `maxObservations` decisions,
/// or a compiler silent for `compileTimeout` kill the compiler (its process
/// group), remove the directory and come back as LaunchOutcome::error, which
/// names the source file. The caller's cleanup scope owns the compiler and
/// the directory meanwhile, so a signal handler that cleans the scope up
/// (src/cli/interrupt.h) leaves neither behind. A launcher killed outright
/// (SIGKILL) still takes its compiler with it (support/spawn.h); its
/// directory is removed by the next interactive compile
/// (support::TempDir::reapOrphans).
///
/// Per call: no temporary file but the two fifos, no Python; the policy file
/// is read once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_LAUNCHER_H
#define MLGO_LAUNCH_LAUNCHER_H

#include "mlgo/policy/policy_runner.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlgo::launch {

struct LaunchOptions {
  /// The compiler and its arguments, as the build called it.
  std::vector<std::string> command;
  /// The problem whose flags the compile gets; empty = the policy's.
  std::string problem;
  /// The longest the launcher waits on the compiler (between two decision
  /// requests, and for its exit); then it is killed.
  std::chrono::milliseconds compileTimeout{std::chrono::minutes(10)};
  /// Most decision requests one compile may make; then it is killed.
  uint64_t maxObservations = 4'000'000;
  /// Parent of the fifo directory; empty = $TMPDIR, else /tmp.
  std::filesystem::path tempDir;
};

struct LaunchOutcome {
  /// What the launcher should exit with: the compiler's exit code, or 1 when
  /// it failed otherwise (killed, or a failure of the launcher's own).
  int exitCode = 0;
  /// A failure the compiler did not report itself, naming the source file;
  /// nullopt when the compiler ran to its own end (success, or its own
  /// errors, which it printed).
  std::optional<Error> error;
  /// Decisions the policy took.
  uint64_t observations = 0;
};

/// Runs one compile (`options.command`, whose input is `source`) with
/// `policy` answering; blocks until the compiler has exited and been
/// reaped. Errors (kInvalidArgument) only for a problem the policy is not
/// for or an unknown problem; everything that goes wrong with the compile
/// itself is in the outcome. The compiler and its directory are registered
/// in `scope` until the call returns.
Result<LaunchOutcome> runInteractive(const LaunchOptions& options, const std::string& source,
                                     const policy::Policy& policy, support::CleanupScope& scope);

/// Replaces this process with the compiler (execvp of command[0], looked up
/// in PATH when it has no '/'). Returns only when that fails: kNotFound or
/// kIo, naming the program.
Status runPassThrough(std::span<const std::string> command);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_LAUNCHER_H
