//===- mlgo/env/compiler_driver.h - the seam in front of the compiler -*- C++ -*-===//
///
/// \file
/// Everything an Environment asks of a compiler goes through one
/// CompilerDriver: what it is (version, LLVM options, the start-up probe),
/// interactive compiles (one per episode), plain compiles (the default
/// heuristic's baseline) and the score of a compile's outputs.
///
/// processCompilerDriver() (compiler_driver.cc) is the real one: it spawns
/// the compiler named by the command's argv[0] and talks to it over a fifo
/// pair (compiler_session.h; plain compiles: run_compile.h; clang_probe.h,
/// score.h's scoreCompile). Tests substitute an in-process fake
/// through EnvironmentOptions::driver (env/testing/fake_driver.h replays
/// recorded clang streams).
///
///   Environment::create      -> version(), llvmOptions() (regalloc only), probe()
///   Environment::reset/step  -> startSession(), then the session's calls;
///                               score() once the stream has ended
///   default (baseline) score -> runPlain(), then score(), on a worker thread
///
/// Ownership: the Environment holds the driver through a shared_ptr for its
/// whole life; a driver may serve several Environments. Sessions the driver
/// returns belong to the caller and may outlive nothing but the driver.
///
/// Threads: every member may be called concurrently from any thread (one
/// episode per thread, baseline workers beside them); implementations are
/// thread-safe. A session itself is used by one thread at a time.
///
/// Blocking: every call may block for as long as a compile takes, bounded by
/// the timeouts passed in. A call must also return within milliseconds once
/// its cancellation flag turns true: `cancel` for runPlain(),
/// SessionLimits::cancel for a session's calls (the real driver gets this
/// from SessionLimits::spawner, whose stop kills its processes). runPlain()
/// with an armed `interrupt` (support/interrupt.h) asks it at least every
/// kInterruptSlice on the calling thread and, once it says yes, stops the
/// compile (killed and reaped, its object file removed) and returns
/// kInterrupted within that slice.
///
/// Errors are values, with the codes compiler_session.h and clang_probe.h
/// document: kNotFound (no such compiler), kCompiler (it failed, crashed or
/// sent a malformed stream), kTimeout (a timeout passed), kInterrupted (the
/// caller's interrupt stopped it), kUnsupported (the probe: the compiler
/// cannot run the problem), kIo.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_COMPILER_DRIVER_H
#define MLGO_ENV_COMPILER_DRIVER_H

#include "mlgo/env/clang_probe.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/score.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace mlgo::env {

class CompilerDriver {
public:
  virtual ~CompilerDriver() = default;

  /// The compiler's version (queryClangVersion).
  // Every call that runs a compiler or makes a temporary registers it in
  // `scope` (support/cleanup_scope.h; the real driver does), which must
  // outlive the call.

  virtual Result<ClangVersion> version(support::CleanupScope& scope,
                                       const std::filesystem::path& clang,
                                       std::chrono::milliseconds timeout) = 0;
  /// The LLVM options it knows (queryLlvmOptions).
  virtual Result<std::vector<std::string>> llvmOptions(support::CleanupScope& scope,
                                                       const std::filesystem::path& clang,
                                                       std::chrono::milliseconds timeout,
                                                       const std::filesystem::path& tempParent) = 0;
  /// The header an interactive compile for `problem` sends (probeProblem).
  virtual Result<ProblemProbe> probe(support::CleanupScope& scope,
                                     const std::filesystem::path& clang, const Problem& problem,
                                     const ProblemOptions& options,
                                     std::chrono::milliseconds timeout,
                                     const std::filesystem::path& tempParent) = 0;
  /// Starts one interactive compile and returns at once; owns `dir`, which
  /// holds the command's files and goes with the session
  /// (startCompilerSession).
  virtual Result<std::unique_ptr<CompilerSession>>
  startSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits) = 0;
  /// Runs a plain compile to completion (runCompile). `interrupt`: the
  /// calling thread's stop request, or null (see Blocking above).
  virtual Result<CompileReport> runPlain(support::CleanupScope& scope,
                                         const CompileCommand& command,
                                         std::chrono::milliseconds timeout,
                                         const std::atomic<bool>* cancel, support::Spawner* spawner,
                                         support::Interrupt* interrupt) = 0;
  /// The score of a finished compile's outputs (score.h's scoreCompile): the
  /// object file, and for the scores that read them the remarks file.
  virtual Result<ModuleScore> score(ScoreKind kind, const CompileCommand& command) = 0;
};

/// The real driver: compiler processes behind fifos. Stateless and shared.
std::shared_ptr<CompilerDriver> processCompilerDriver();

} // namespace mlgo::env

#endif // MLGO_ENV_COMPILER_DRIVER_H
