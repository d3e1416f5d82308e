//===- corpus/build_hints.h - why a build compiled nothing ------*- C++ -*-===//
///
/// \file
/// The hints captureBuild gives when no compile came through its wrappers
/// (mlgo/corpus/build_capture.h): first what it finds in the build, then
/// the usual reasons. Private to the corpus layer.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_BUILD_HINTS_H
#define MLGO_CORPUS_BUILD_HINTS_H

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus::detail {

struct BuildOutcome {
  std::vector<std::string> command; ///< The build command as given.
  std::filesystem::path workDir;    ///< Where it ran.
  int exitCode = 0;
  std::size_t vanished = 0; ///< Configure checks caught (BuildCaptureSummary::vanished).
};

/// One line per likely reason, most specific first:
///   - the build failed (exit code N);
///   - compiles were caught, but all in directories now gone;
///   - DIR/CMakeCache.txt: configured before, with these compilers;
///   - DIR/build.ninja generated before (no CMakeCache.txt beside it);
///   - FILE (Makefile, makefile, GNUmakefile, build.ninja; not in a CMake
///     directory, said above) or the command names a compiler by absolute
///     path (a path whose last part is a shimmed name, compiler_shims.h);
///   - the general reasons: an up-to-date build, absolute compiler paths,
///     a compiler server started outside the build.
/// DIR: the working directory and up to 16 directories the command names
/// (`make -C d`, `cmake --build b`, `ninja -C b`), relative to `workDir`.
/// Reads at most 1 MiB of each file; never fails (unreadable files are
/// skipped).
std::vector<std::string> explainNothingCaught(const BuildOutcome& outcome);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_BUILD_HINTS_H
