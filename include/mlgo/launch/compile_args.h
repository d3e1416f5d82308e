//===- mlgo/launch/compile_args.h - which compiler calls a launcher takes -*- C++ -*-===//
///
/// \file
/// `mlgo-env launch` sits in front of every compiler call of a build, like
/// ccache. It takes over a call only when it is a compile it can answer the
/// compiler's questions for: `-c`, exactly one input, and that input of a
/// supported language (C, C++, Objective-C/C++, their preprocessed forms,
/// LLVM IR; by `-x` or by extension). Everything else passes through to the
/// compiler untouched: links, `-E`, `-S`, `-M`/`-MM` (without `-c`),
/// `-fsyntax-only`, `-###`, `--version`, `-print-*`, `-save-temps`, a
/// direct `-cc1`, several inputs, standard input (`-`), assembly and other
/// languages, and response files (`@file`, which the launcher does not
/// expand).
///
/// Classification never fails: an argument it cannot place counts as an
/// input, so a call it misreads has "several inputs" and passes through,
/// which is always safe (the build gets the plain compiler). Options that
/// take their value as the next argument (`-o F`, `-I D`, `-MF F`,
/// `-Xclang X`, `-mllvm X`, ...) are known by name.
///
/// Pure function, no I/O; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_COMPILE_ARGS_H
#define MLGO_LAUNCH_COMPILE_ARGS_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::launch {

/// What one argument of a call is.
enum class ArgRole : uint8_t {
  kOption, ///< An option ("-O2", "-I", "-Iinc", "-c").
  kValue,  ///< The value of the option before it ("inc" in "-I inc").
  kInput,  ///< An input file, or "-".
  kOutput, ///< "-o", its value, or "-oFILE".
};

struct CallKind {
  /// A compile of one source the launcher runs interactively.
  bool interactive = false;
  /// Several sources in one call, or a compile-and-link: the launcher
  /// compiles each source alone (split_call.h). Not `interactive`.
  bool split = false;
  /// With `split`: the call links (it has no `-c`).
  bool link = false;
  /// With `split`: the positions of the sources in the arguments, in order.
  std::vector<size_t> sources;
  /// One per argument.
  std::vector<ArgRole> roles;
  /// The one input (set when there is exactly one, even if it passes through).
  std::string source;
  /// The object it writes (`-o FILE`), as given; empty when the call names none.
  std::string output;
  /// The optimisation level it asks for: the last `-O...` (`-O` is `-O1`,
  /// `-O4` and above `-O3`), else `-O0`.
  std::string optLevel = "-O0";
  /// Why the call passes through ("-E", "a link without sources", "-x c with
  /// several inputs", ...); empty when interactive or split.
  std::string reason;
};

/// Classifies the compiler's arguments (without the compiler itself).
CallKind classifyCall(std::span<const std::string> args);

/// Whether `path`'s extension names a language the launcher compiles (`.c`,
/// `.cc`, `.cpp`, `.C`, `.i`, `.m`, `.ll`, `.bc`, ...; case matters).
bool isSupportedSource(std::string_view path);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_COMPILE_ARGS_H
