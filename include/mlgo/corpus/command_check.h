//===- mlgo/corpus/command_check.h - refusing unsafe recompiles -*- C++ -*-===//
///
/// \file
/// Checks, once when the corpus is opened, that every module's recompile
/// command keeps clang inside the compile's private directory and names no
/// input but the module's own bitcode. Refused (kInvalidArgument, with a
/// message naming the module, the argument, and the way out):
///
///  - a flag that makes clang write a file of its own choosing (kWritingFlags
///    below): `-o`, `-stats-file`, `-save-temps`, `-ftime-trace`,
///    `-opt-record-file`, `-foptimization-record-file`,
///    `-fsave-optimization-record`, `-dependency-file`, `-MF`, `-MD`,
///    `-MMD`, `-coverage-notes-file`, `-stack-usage-file`,
///    `-serialize-diagnostic-file`, `-header-include-file`,
///    `-diagnostic-log-file`, `-module-dependency-dir`, `-dependency-dot`,
///    `-as-secure-log-file`; spelled alone, `FLAG=VALUE`, joined for the
///    short ones (`-MFx`, `-ofile`), and also behind `-Xclang` or `-mllvm`;
///  - a positional argument: a word that is not a flag and not the value of
///    the flag before it (kSeparateValueFlags: cc1 flags whose value is the
///    next argument, e.g. `-triple x86_64-pc-linux-gnu`);
///  - an empty `.bc` file.
///
/// Such flags are refused, not redirected: the user deletes them
/// (`--delete-flag=FLAG`) or fixes the corpus. The dependency-file flags real
/// builds record (`-dependency-file`, `-MT`, ...) are standard deletions
/// (command_line.h), so corpora extracted from real builds pass.
///
/// Pure functions except checkModule (which stats the `.bc`); thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_COMMAND_CHECK_H
#define MLGO_CORPUS_COMMAND_CHECK_H

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/support/result.h"

#include <span>
#include <string>
#include <string_view>

namespace mlgo::corpus {

/// The flags that make clang write a file (see the file comment).
std::span<const std::string_view> writingFlags();

/// Checks `args` (a module's recompile arguments without the `-x ir <bc>`,
/// ThinLTO and `-o` parts mlgo-env appends) for writing flags and
/// positional arguments. kInvalidArgument naming `module` and the argument.
Status checkCommandArgs(std::string_view module, std::span<const std::string> args);

/// Rewrites `module`'s command with `rules` (recompileArgs), checks it with
/// checkCommandArgs and refuses an empty `.bc` (kInvalidArgument) or one it
/// cannot stat (kIo). The message names the module.
Status checkModule(const ModuleSpec& module, const FlagRules& rules);

/// checkModule for every module of `corpus`; the first failure wins.
Status checkCorpusCommands(const Corpus& corpus, const FlagRules& rules);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_COMMAND_CHECK_H
