//===- env/compile_util.h - helpers shared by compile runners ---*- C++ -*-===//
///
/// \file
/// Private to env/: what the interactive session and the plain compile
/// runner both need to judge a finished compiler process.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_COMPILE_UTIL_H
#define MLGO_ENV_COMPILE_UTIL_H

#include "mlgo/env/compiler_session.h"

namespace mlgo::env::detail {

/// User + system CPU time in a resource usage record.
std::chrono::nanoseconds cpuTime(const struct rusage& usage);
/// argv[0], or "compiler".
std::string programName(const CompileCommand& command);
/// kCompiler (with an output excerpt) unless the reaped `process` exited
/// with 0 and wrote the command's object file.
Status checkExit(const CompileCommand& command, const support::Subprocess& process,
                 const std::string& output);

} // namespace mlgo::env::detail

#endif // MLGO_ENV_COMPILE_UTIL_H
