//===- mlgo/launch/thinlto_jobs.h - lld's ThinLTO backend jobs, run -*- C++ -*-===//
///
/// \file
/// A distributor for lld's Distributed ThinLTO (`clang -fthinlto-distributor=`
/// / lld `--thinlto-distributor=`): lld writes the link's backend compiles as
/// a JSON file and runs the distributor on it; the distributor runs every job
/// and exits 0 once each wrote its outputs. The file, as lld-22 writes it:
///
///     {"common": {"linker_output": "prog", "args": ["/usr/bin/clang", "-c",
///                 "--target=x86_64-pc-linux-gnu", "-O2", "-fpic", ...], "inputs": []},
///      "jobs": [{"args": ["a.o", "-fthinlto-index=a.1.native.o.thinlto.bc", "-o",
///                         "a.1.native.o"], "inputs": [...], "outputs": ["a.1.native.o"]}]}
///
/// A job's command is `common.args` followed by its own `args`. With
/// `--thinlto-remote-compiler=mlgo-env-launch` and the prepended arguments
/// `--tuning=DIR -- clang` (and `--thinlto-remote-compiler-arg=-x`, `ir`), each
/// backend compile goes through the launcher, which applies the tuned
/// decisions of its module (docs/tuning.md). `mlgo-env-launch
/// --thinlto-jobs=FILE [--jobs=N]` is this distributor.
///
/// Runs up to `parallel` (1 to 8) jobs at once, each in its own process group
/// registered in `scope`, output inherited; blocks until all ended. Errors:
/// kInvalidArgument for a file that is not such a description (naming it),
/// kIo naming the first job (its output) that failed or could not start.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_THINLTO_JOBS_H
#define MLGO_LAUNCH_THINLTO_JOBS_H

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::launch {

/// The commands of a job file, one per job.
Result<std::vector<std::vector<std::string>>> readThinLtoJobs(const std::filesystem::path& file);

/// Runs every job of `file` (see the file comment).
Status runThinLtoJobs(const std::filesystem::path& file, unsigned parallel,
                      support::CleanupScope& scope);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_THINLTO_JOBS_H
