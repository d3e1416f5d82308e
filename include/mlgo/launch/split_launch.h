//===- mlgo/launch/split_launch.h - a compiler call taken apart --*- C++ -*-===//
///
/// \file
/// Runs a call that classifyCall split (split_call.h): each source compiled
/// alone, in order, by the caller's route (a policy or a tuning table:
/// `compile`), then for a compile-and-link the link on the objects.
///
/// - `-c`: each object is written where the compiler puts it. A source that
///   fails does not stop the others (nor does it the compiler); the exit
///   code is the first failure's.
/// - A compile-and-link: the objects go to a private 0700 directory
///   `<temp>/mlgo-env-launch-<pid>.<start>-XXXXXX` (temp: LaunchOptions::
///   tempDir, else $TMPDIR, else /tmp), registered in `scope`. A failed
///   compile skips the link, as the compiler does; the link runs as a child
///   writing to the launcher's stdout and stderr, in a process group of its
///   own, with no time limit (a link may take long; the build's own), and
///   its exit code is the call's. The directory is removed when the call
///   returns, however it ended; on a signal the scope's cleanup removes it
///   and kills the compiler or the link (src/cli/interrupt.h); a launcher
///   killed outright leaves it to the next launched compile
///   (support::TempDir::reapOrphans).
///
/// Blocks until the last compile, or the link, has ended; single-threaded.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_SPLIT_LAUNCH_H
#define MLGO_LAUNCH_SPLIT_LAUNCH_H

#include "mlgo/launch/compile_args.h"
#include "mlgo/launch/launcher.h"

#include <functional>
#include <string>

namespace mlgo::launch {

/// One source's compile: `options.command` compiles `source` alone; `module`
/// is the object name its module is known by (split_call.h's objectName).
/// Returns the exit code of that compile (the compiler's, else 1), having
/// reported its own failures.
using CompileAlone = std::function<int(const LaunchOptions& options, const std::string& source,
                                       const std::string& module)>;

/// Runs the split call `options.command` (whose arguments `kind` classified;
/// see the file comment). Returns the exit code for the launcher: the first
/// failed compile's, else the link's (0 for `-c`). Errors (kIo) when the
/// directory cannot be made, the link cannot be started or was killed by a
/// signal, naming it.
Result<int> runSplit(const LaunchOptions& options, const CallKind& kind,
                     const CompileAlone& compile, support::CleanupScope& scope);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_SPLIT_LAUNCH_H
