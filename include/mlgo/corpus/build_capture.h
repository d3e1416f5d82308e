//===- mlgo/corpus/build_capture.h - a corpus from a build ------*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus build -- CMD...`: runs a project's build with `CC` and
/// `CXX` pointing at two small wrapper scripts, then extracts a corpus from
/// what it compiled.
///
/// The wrappers (POSIX sh, in `<output>/.mlgo-corpus-build/`, removed
/// afterwards; one interrupted with the build is removed by the next run
/// into the same output directory) run
/// the real compilers. For a compile to an object (`-c`, and none of `-E`,
/// `-S`, `-M`, `-MM`, `-fsyntax-only`) they record the working directory and
/// the arguments as given, then add `-Xclang -fembed-bitcode=all`, or for
/// ThinLTO local `-flto=thin`. With ThinLTO, links (no `-c`) also get
/// `-flto=thin -fuse-ld=lld -Wl,--save-temps=import
/// -Wl,--thinlto-emit-index-files`. Anything else passes through unchanged.
///
/// After the build, the records become `<output>/compile_commands.json`
/// (one entry per compile, sorted), minus compiles whose source or working
/// directory no longer exists (configure-time checks, e.g. CMake's
/// TryCompile scratch directories), and extractCorpus runs on it with the
/// given options. The build's own output goes to this process's
/// stdout/stderr.
///
/// Bounds and limits: one capture per output directory at a time; the build sees CC/CXX in its
/// environment only, so a CMake build directory configured before keeps its compilers (configure a
/// fresh one inside the command); objects the build deletes or moves (e.g.
/// into archives, removing them) cannot be extracted and are reported as
/// missing; with ThinLTO, objects linked from archives are named by lld in a
/// way the extractor does not follow and are reported as missing their
/// import bitcode.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_BUILD_CAPTURE_H
#define MLGO_CORPUS_BUILD_CAPTURE_H

#include "mlgo/corpus/extract.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus {

struct BuildCaptureOptions {
  /// The build command (argv; argv[0] searched in PATH). Runs in the
  /// current working directory.
  std::vector<std::string> command;
  /// The real compilers the wrappers run.
  std::filesystem::path cc = "clang-22";
  std::filesystem::path cxx = "clang++-22";
  /// Where the corpus goes; `input`/`inputType` are set by captureBuild
  /// (the recorded database); everything else is used as given.
  ExtractOptions extract;
};

struct BuildCaptureSummary {
  int buildExitCode = 0;    ///< 0 when the build succeeded.
  std::size_t compiles = 0; ///< Compiles recorded (and in the database).
  std::size_t vanished = 0; ///< Compiles dropped: their source or directory is gone.
  std::filesystem::path database;
  ExtractSummary extract;
};

/// Runs the build and extracts (see the file comment); blocks until both are
/// done. A failing build is not an error: what it compiled is extracted and
/// `buildExitCode` says how it ended. Errors: kInvalidArgument for an empty
/// command; kNotFound when the command or a compiler cannot be found; kIo
/// when the wrappers, the records or the database cannot be written or read;
/// extractCorpus's errors.
Result<BuildCaptureSummary> captureBuild(const BuildCaptureOptions& options);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_BUILD_CAPTURE_H
