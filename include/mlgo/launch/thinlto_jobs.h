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
/// Runs up to `parallel` jobs at once (clamped to 1..8), each in its own
/// process group registered in `scope`, output inherited; blocks until all
/// ended (no deadline of its own: lld waits for the distributor, and each
/// compile through the launcher has the launcher's). Errors: kInvalidArgument
/// for a file that is not such a description (naming it), kIo naming the
/// first job (its output) that failed, could not start, or exited 0 without
/// writing one of its `outputs`.
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

struct ThinLtoJob {
  std::vector<std::string> command; ///< common.args, then the job's args.
  std::vector<std::string> outputs; ///< What it must have written (may be empty).
};

/// The jobs of a job file.
Result<std::vector<ThinLtoJob>> readThinLtoJobs(const std::filesystem::path& file);

/// Runs every job of `file` (see the file comment).
Status runThinLtoJobs(const std::filesystem::path& file, unsigned parallel,
                      support::CleanupScope& scope);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_THINLTO_JOBS_H
