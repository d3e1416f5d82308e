//===- mlgo/support/compiler_shims.h - compiler names on PATH ---*- C++ -*-===//
///
/// \file
/// A directory of executables named after the usual C and C++ compilers,
/// each of which runs a given command with its own arguments appended. Put
/// first on a build's PATH, it catches the compiles of builds that name their
/// compiler themselves (`CC=gcc` in a Makefile, a rule calling `cc`) instead
/// of taking CC/CXX from the environment, as ccache's masquerade mode and
/// Bear's wrapper mode do. Used by `mlgo-env corpus build`
/// (mlgo/corpus/build_capture.h); meant for any command that must catch a
/// build's compiles.
///
/// The names (compilerShimNames), each with its role:
///
///     C:    cc  gcc  clang  gcc-N  clang-N
///     C++:  c++ g++  clang++  g++-N  clang++-N
///     N = 4 .. 30 (whole versions only: gcc-4.9, clang-3.8 are not shimmed)
///
/// and every gcc/g++/clang/clang++ name above (versioned or not) again with
/// each of the host's target prefixes `M-linux-gnu-`, `M-pc-linux-gnu-` and
/// `M-unknown-linux-gnu-`, M being the machine (`uname -m`, e.g.
/// `x86_64-linux-gnu-gcc-12`): 450 names on every machine. Left alone: cross
/// compilers for other machines (`aarch64-linux-gnu-gcc` on x86_64: their
/// objects are for another target), the POSIX `c89`/`c99` (they imply a
/// -std), `cpp`, `clang-cl`, `clang-cpp`, tools such as `gcc-ar`, and any
/// compiler called by absolute path (`/usr/bin/gcc`), which PATH never sees.
///
/// Layout: two POSIX sh scripts, `.mlgo-shim-c` and `.mlgo-shim-c++`, each
/// `exec <command> "$@"` (the command's words single-quoted); every name is
/// a relative symlink to one of them. A shim adds one `sh` start to each
/// compile it runs, as much as a small sh wrapper costs itself.
///
/// No recursion: the first word of each command must be an absolute path
/// (resolve it before the build's PATH changes), and it must not lie inside
/// the shim directory, so a shim never finds itself, or another shim of the
/// same directory, through PATH.
///
/// Ownership and cleanup: the caller owns the directory. writeCompilerShims
/// creates it (its parent must exist; it must not) and removes whatever it
/// created when it fails; the caller removes it (remove_all) when the build
/// ends, and registers it in its CleanupScope when an interruption must
/// remove it too. Nothing here touches this process's environment: the
/// caller passes shimmedPath() to the build it starts.
///
/// Thread safety: the functions are reentrant; two shim directories are
/// independent.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_COMPILER_SHIMS_H
#define MLGO_SUPPORT_COMPILER_SHIMS_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::support {

enum class CompilerRole { kC, kCxx };

struct CompilerShimName {
  std::string name;
  CompilerRole role;
};

/// The machine this process runs on (`uname -m`: "x86_64", "aarch64").
std::string hostMachine();

/// Every name a shim directory holds for `machine` (see the file comment),
/// in a fixed order, no duplicates.
std::vector<CompilerShimName> compilerShimNames(std::string_view machine);

struct CompilerShimOptions {
  /// The command the C names run, their arguments appended. Word 0: an
  /// absolute path outside the shim directory.
  std::vector<std::string> cCommand;
  /// The same for the C++ names.
  std::vector<std::string> cxxCommand;
  /// Whose target prefixes to shim; empty = hostMachine().
  std::string machine;
};

/// Writes the shim directory `dir` (see the file comment). Errors:
/// kInvalidArgument for an empty command, a relative word 0 or one inside
/// `dir` (the message names it); kIo when `dir` exists already or cannot be
/// written (nothing is left behind then).
Status writeCompilerShims(const std::filesystem::path& dir, const CompilerShimOptions& options);

/// A PATH value with `dir` first, then `path` (this process's PATH as
/// given; when null, the system default "/usr/local/bin:/usr/bin:/bin";
/// when empty, `dir` alone).
std::string shimmedPath(const std::filesystem::path& dir, const char* path);

/// `word` single-quoted for POSIX sh ('it'\''s').
std::string shellQuote(std::string_view word);

} // namespace mlgo::support

#endif // MLGO_SUPPORT_COMPILER_SHIMS_H
