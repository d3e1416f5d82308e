//===- launch/tuned_support.h - a tuned launch's checks and log --*- C++ -*-===//
///
/// \file
/// Private to launch/: what a tuned launch (tuned_launch.h) does around the
/// compile: whether the compiler is the table's, and the log line it appends.
/// Single-threaded, like the compile it serves.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_TUNED_SUPPORT_H
#define MLGO_LAUNCH_TUNED_SUPPORT_H

#include "mlgo/launch/tuned_launch.h"
#include "mlgo/support/cleanup_scope.h"

#include <string>

namespace mlgo::launch {

/// Why `program` (as the build names it) is not the compiler of `stamp`;
/// empty when it is: the same resolved path, size and modification time, or
/// else the same first line of `--version` (which it runs, registered in
/// `scope`, for at most 30 s).
std::string compilerMismatch(const std::string& program, const CompilerStamp& stamp,
                             support::CleanupScope& scope);

/// Appends the compile's line to `tuned.log` (tuned_launch.h) with one
/// write() on an O_APPEND descriptor; a message when that failed, else empty.
std::string appendLog(const TunedLaunch& tuned, const std::string& source,
                      const TunedOutcome& result);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_TUNED_SUPPORT_H
