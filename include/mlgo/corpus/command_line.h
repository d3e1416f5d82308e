//===- mlgo/corpus/command_line.h - recompile command lines -----*- C++ -*-===//
///
/// \file
/// Turns a module's recorded cc1 arguments into the arguments that recompile
/// it from its `.bc`. The result is an argv WITHOUT the program name: run it
/// as `<clang> <args...>`; args[0] is `-cc1` for `.cmd`-based corpora. The
/// caller appends its own `-mllvm` flags after it.
///
/// Note for callers: because the command is a cc1 command, driver-only flags
/// are rejected by clang (e.g. `-fno-crash-diagnostics` gives "unknown
/// argument"); cc1 never writes crash reproducers, so none is needed.
///
/// Rewriting, in this order:
///  1. Deletions. A standard deletion (standardDeletedFlags) removes an
///     argument equal to the flag or spelled `flag=value`, plus the separate
///     value of flags that take one (`-split-dwarf-file x`, `-MT x`).
///     `-mllvm` options of interactive MLGO mode (the ML advisors and their
///     channels, as a compile through `mlgo-env launch` records them) go
///     too, with their `-mllvm`: the environment adds its own.
///     A user deletion (ml-compiler-opt's rule) removes every argument that
///     starts with the flag; if that argument has no `=`, the argument after
///     it (its value) is removed too. So `-f=v` and `-f v` are both handled.
///  2. Otherwise, an argument starting with a replaced flag becomes `-f=NEW`
///     (when it was `-f=old`) or `-f NEW` (when it was `-f old`). In NEW,
///     `{context.module_full_path}` expands to the module's `.bc` path and
///     `{context.thinlto_full_path}` to its ThinLTO index path (the spellings
///     ml-compiler-opt uses). Every replace rule must match exactly once.
///  3. The user's added flags are appended.
///  4. `-x ir <module>.bc` is appended; with ThinLTO,
///     `-fthinlto-index=<module>.thinlto.bc -mllvm -thinlto-assume-merged`.
///  5. `-o <output>` is appended.
/// Verified with clang-22: the result reproduces the original object's .text
/// byte for byte when nothing but the standard deletions is applied.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_COMMAND_LINE_H
#define MLGO_CORPUS_COMMAND_LINE_H

#include "mlgo/corpus/corpus.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlgo::corpus {

/// Flags always removed from a recorded command: they embed bitcode again,
/// point at files of the original build (split DWARF, ThinLTO index, sample
/// profiles) or write dependency files. (`-fembed-bitcode`, `-split-dwarf-file`,
/// `-split-dwarf-output`, `-fthinlto-index`, `-fprofile-sample-use`,
/// `-fprofile-remapping-file`, `-dependency-file`, `-MT`, `-MQ`,
/// `-sys-header-deps`, `-MP`.)
std::span<const std::string_view> standardDeletedFlags();

/// User rules for rewriting a recorded command (ml-compiler-opt's
/// delete_flags / replace_flags / additional_flags).
struct FlagRules {
  /// Flag prefixes to delete, e.g. "-fprofile-instrument-use-path".
  std::vector<std::string> deleteFlags;
  /// (flag, new value) pairs, e.g. {"-fprofile-sample-use", "/p/x.prof"}.
  std::vector<std::pair<std::string, std::string>> replaceFlags;
  /// Arguments appended verbatim before `-x ir`.
  std::vector<std::string> addFlags;

  bool empty() const { return deleteFlags.empty() && replaceFlags.empty() && addFlags.empty(); }
  friend bool operator==(const FlagRules&, const FlagRules&) = default;
};

/// Checks rules for contradictions: an empty or non-dash flag name, a flag
/// both deleted and replaced, or added and replaced/deleted, a flag replaced
/// twice, or a rule touching `-fthinlto-index`, `-x` or `-o` (the
/// infrastructure owns those). kInvalidArgument naming the flag.
Status validateFlagRules(const FlagRules& rules);

/// Parses rule strings as given on a command line: deletions and additions
/// are taken as is; each replacement is "FLAG=VALUE" split at the first `=`.
/// Returns the validated rules (see validateFlagRules).
Result<FlagRules> parseFlagRules(std::vector<std::string> deleteFlags,
                                 std::span<const std::string> replaceFlags,
                                 std::vector<std::string> addFlags);

/// Splits the contents of a `.cmd` file on NUL and drops empty entries.
/// Fails (kParse, naming `source`) unless the first argument is `-cc1`.
Result<std::vector<std::string>> parseCommandFile(std::string_view contents,
                                                  std::string_view source);

/// The full argv (without the clang program) recompiling `module` into the
/// object file `output`, per the steps in the file comment. Fails
/// (kInvalidArgument) when `rules` are invalid or a replace rule matches no
/// argument or more than one. Pure: reads no files.
Result<std::vector<std::string>> recompileArgs(const ModuleSpec& module,
                                               const std::filesystem::path& output,
                                               const FlagRules& rules = {});

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_COMMAND_LINE_H
