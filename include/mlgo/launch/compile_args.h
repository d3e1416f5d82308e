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

#include <span>
#include <string>

namespace mlgo::launch {

struct CallKind {
  /// A compile the launcher runs interactively.
  bool interactive = false;
  /// The one input (set when there is exactly one, even if it passes through).
  std::string source;
  /// The object it writes (`-o FILE`), as given; empty when the call names none.
  std::string output;
  /// The optimisation level it asks for: the last `-O...` (`-O` is `-O1`,
  /// `-O4` and above `-O3`), else `-O0`.
  std::string optLevel = "-O0";
  /// Why the call passes through ("no -c", "-E", "2 inputs", ...); empty when
  /// interactive.
  std::string reason;
};

/// Classifies the compiler's arguments (without the compiler itself).
CallKind classifyCall(std::span<const std::string> args);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_COMPILE_ARGS_H
