//===- mlgo/corpus/build_capture.h - a corpus from a build ------*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus build -- CMD...`: runs a project's build so that its
/// compiles go through two small wrapper scripts, then extracts a corpus
/// from what it compiled.
///
/// How compiles are caught: the build's environment has `CC` and `CXX` set
/// to the wrappers, and `PATH` starts with a directory of compiler shims
/// (mlgo/support/compiler_shims.h lists the names: cc, gcc, clang, c++, g++,
/// clang++, their versioned names gcc-12 ... clang++-22, and the host's
/// x86_64-linux-gnu-gcc style names), the C names running the C wrapper and
/// the C++ names the C++ one. So a Makefile that sets `CC=gcc` itself, or a
/// rule that calls `cc`, is caught too. The real compilers are resolved to
/// absolute paths before PATH changes, so neither a wrapper nor a shim ever
/// finds itself; the build command itself is looked up in the new PATH
/// (`corpus build -- cc -c x.c` is caught). `CCACHE_DISABLE=1` is set too:
/// a ccache in front would answer from its cache without compiling. The
/// shim directory also has `ar`, `ranlib` and `nm` running LLVM's from the
/// real C compiler's directory (when it has them): GNU ar and nm read objects
/// that carry bitcode through /usr/lib/bfd-plugins, and an older LLVMgold
/// there (Debian's llvm-14) fails on clang-22's bitcode, leaving static
/// archives without symbols (the build's links fail) and nm's lists empty.
/// Not caught: a compiler called by absolute path (`/usr/bin/gcc`), a CMake
/// or Meson build directory configured before (it keeps the compilers it
/// found then; configure a fresh one inside the command), a compiler server
/// started outside the build (sccache, icecc), and anything a build that is
/// already up to date does not compile.
///
/// The wrappers (POSIX sh) run the real compilers. For a compile to an
/// object (`-c`, and none of `-E`, `-S`, `-M`, `-MM`, `-fsyntax-only`, on the
/// command line or as a word of a response file it names) they
/// record the working directory and the arguments as given (argv[0] the
/// real compiler) with a copy of each `@file` response file they name (Ninja
/// deletes its response files after the command; the database gets the
/// file's words in place of `@file`), then add `-Xclang
/// -fembed-bitcode=all`, or for ThinLTO local `-flto=thin`. With ThinLTO, links (no `-c`) also get
/// `-flto=thin -fuse-ld=lld -Wl,--save-temps=import
/// -Wl,--thinlto-emit-index-files`. Anything else passes through unchanged.
///
/// After the build, the records become `<output>/compile_commands.json`
/// (one entry per compile, sorted; mlgo/corpus/compile_entry.h reads it:
/// every build style it names), minus configure checks: compiles whose
/// source or working directory no longer exists (e.g. CMake's TryCompile
/// scratch directories) or that ran inside a `CMakeFiles` directory (CMake's
/// checks that stay, like check_ipo_supported's _CMakeLTOTest-* projects,
/// whose trivial `main` would otherwise become modules; a build's own
/// compiles never run there), and extractCorpus runs on it with the
/// given options. When nothing was recorded, neither is written (a corpus
/// an earlier run left in the output directory stays as it was) and
/// `hints` says why that may be (what was found first: a build that failed,
/// a CMakeCache.txt or a build.ninja configured before, a Makefile,
/// build.ninja or command naming a compiler by absolute path; then the
/// usual reasons). The build's own output goes to this process's
/// stdout/stderr; it runs in this process's process group, so a Ctrl-C at
/// the terminal reaches it as usual.
///
/// Files and cleanup: everything lives in `<output>/.mlgo-corpus-build/`
/// (`cc` and `c++`, the wrappers; `bin/`, the 452 shim entries;
/// `records/`, one small file per compile and one per response file it
/// names), created afresh at the start (a
/// leftover of an earlier run is removed) and removed when captureBuild
/// returns, whatever the outcome. With `cleanup` set it is registered there
/// too, so an interruption that runs CleanupScope::cleanup() (the command
/// line's Ctrl-C handling) removes it; a process killed outright leaves it
/// to the next run into the same output directory. A signal sent to this
/// process alone (not to its group) does not stop the build: it runs on
/// without the directory, its compiles through CC/CXX failing and those
/// through the shim names going to the compilers further along PATH. The
/// database and the corpus stay.
///
/// Bounds and limits: one capture per output directory at a time; records
/// take one file per compile (~the compile's argv) until the build ends;
/// the hints read at most 1 MiB of each of a few build files (Makefile,
/// makefile, GNUmakefile, build.ninja, CMakeCache.txt) in the working
/// directory and in directories named by the command (at most 16);
/// objects the build deletes or moves (e.g. into archives, removing them)
/// cannot be extracted and are reported as missing; with ThinLTO, objects
/// linked from archives are named by lld in a way the extractor does not
/// follow and are reported as missing their import bitcode.
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

namespace mlgo::support {
class CleanupScope;
}

namespace mlgo::corpus {

struct BuildCaptureOptions {
  /// The build command (argv; a bare argv[0] is looked up in the build's
  /// PATH, the shims first). Runs in the current working directory.
  std::vector<std::string> command;
  /// The real compilers the wrappers run (a bare name is looked up in this
  /// process's PATH, before the shims are put in front).
  std::filesystem::path cc = "clang-22";
  std::filesystem::path cxx = "clang++-22";
  /// Where the scratch directory is registered for removal on interruption;
  /// null = not registered. Must outlive the call.
  support::CleanupScope* cleanup = nullptr;
  /// Where the corpus goes; `input`/`inputType` are set by captureBuild
  /// (the recorded database); everything else is used as given.
  ExtractOptions extract;
};

struct BuildCaptureSummary {
  int buildExitCode = 0;    ///< 0 when the build succeeded.
  std::size_t compiles = 0; ///< Compiles recorded (and in the database).
  /// Compiles dropped as configure checks: their source or directory is
  /// gone, or they ran inside a `CMakeFiles` directory.
  std::size_t vanished = 0;
  /// The database written; empty when nothing was recorded (then neither
  /// the database nor the corpus is written, and `extract` is empty).
  std::filesystem::path database;
  ExtractSummary extract;
  /// Set when `compiles` is 0: why nothing may have come through the
  /// wrappers, one line each, what was found in the build first.
  std::vector<std::string> hints;
};

/// Runs the build and extracts (see the file comment); blocks until both are
/// done. A failing build is not an error: what it compiled is extracted and
/// `buildExitCode` says how it ended. Errors: kInvalidArgument for an empty
/// command, or a compiler inside the scratch directory; kNotFound when the
/// command or a compiler cannot be found; kIo when the scratch directory,
/// the records or the database cannot be written or read (also once
/// `cleanup` began); extractCorpus's errors. A build that compiled nothing
/// is not an error either: `compiles` is 0 and `hints` says why.
Result<BuildCaptureSummary> captureBuild(const BuildCaptureOptions& options);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_BUILD_CAPTURE_H
