//===- mlgo/env/run_compile.h - one plain compile, run to the end -*- C++ -*-===//
///
/// \file
/// A plain (non-interactive) compile: the default heuristic's baseline, the
/// start-up probes' queries. No fifo, no decisions: the compiler runs to
/// completion while the host drains its output. The interactive kind is
/// compiler_session.h's; both take a CompileCommand and give a CompileReport.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_RUN_COMPILE_H
#define MLGO_ENV_RUN_COMPILE_H

#include "mlgo/env/compiler_session.h"

#include <atomic>
#include <chrono>
#include <string>

namespace mlgo::env {

/// Runs a plain compile to completion (no channel), draining its output.
/// kTimeout after `timeout` (the compiler is killed), kCompiler unless it
/// exited with 0 and wrote the object file. `cancel`, when set to true by
/// another thread, kills the compile within a few milliseconds (kInternal
/// "cancelled"). `interrupt` (support/interrupt.h; null = none), when armed,
/// is asked at least every kInterruptSlice on the calling thread; a yes
/// kills the compile within that slice (kInterrupted). Whenever the compile
/// is killed, its process group is reaped and its object file (partial
/// output) removed before the call returns.
/// The compiler is registered in `scope`; `spawner` null = the scope's.
Result<CompileReport> runCompile(support::CleanupScope& scope, const CompileCommand& command,
                                 std::chrono::milliseconds timeout,
                                 const std::atomic<bool>* cancel = nullptr,
                                 support::Spawner* spawner = nullptr,
                                 support::Interrupt* interrupt = nullptr);

/// The tail of a compiler's output suitable for an error message: the last
/// `maxLines` non-empty lines, indented.
std::string outputExcerpt(const std::string& output, size_t maxLines = 12);

} // namespace mlgo::env

#endif // MLGO_ENV_RUN_COMPILE_H
