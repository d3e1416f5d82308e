//===- corpus/compile_entry.h - compile_commands.json entries ---*- C++ -*-===//
///
/// \file
/// Parses the entries of a compile_commands.json (clang's JSON compilation
/// database) into the object file each one writes:
///
///  - the command comes from `arguments` (an array) or `command` (one string,
///    split as POSIX sh splits words: quotes and backslashes, no expansions);
///  - `@file` arguments are response files, read relative to the entry's
///    `directory` (nested ones too, as clang-22's driver reads them) and
///    split the same way, recursively (at most
///    kMaxResponseFileDepth levels; a file including itself is an error);
///  - the object is the value of `-o` (`-o x`, `-ox`, `--output=x`), else the
///    entry's optional `output` key, else - for a `-c` compile - what clang
///    would write: the source's file name with its extension replaced by
///    `.o`, in `directory`. Relative paths are taken relative to `directory`;
///  - an entry that does not compile to an object (no `-c`, or `-E`, `-S`,
///    `-M`/`-MM`, `-fsyntax-only`) has no object and is reported.
///
/// A malformed database (not JSON, not an array of objects, an entry without
/// `directory`, without `arguments`/`command`) is an error for the whole run;
/// a problem with one entry (an unreadable response file, not a compile) is
/// recorded in that entry so the rest can be extracted.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_COMPILE_ENTRY_H
#define MLGO_CORPUS_COMPILE_ENTRY_H

#include "mlgo/corpus/extract.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus::detail {

inline constexpr int kMaxResponseFileDepth = 16;

/// One entry of a compilation database.
struct CompileEntry {
  std::size_t index = 0;           ///< Position in the database.
  std::filesystem::path directory; ///< The entry's `directory`, absolute, normalised.
  std::filesystem::path file;      ///< The entry's `file` (may be empty).
  std::vector<std::string> args;   ///< Command words, response files expanded.
  /// The object written, absolute and normalised; unset when `issue` is set.
  std::optional<std::filesystem::path> object;
  /// Why the entry yields no object (kNoOutputInCommand, or
  /// kBadResponseFile); `object` in the issue is the entry's source file.
  std::optional<ObjectIssue> issue;
};

/// Splits a shell command line into words (whitespace separated; single and
/// double quotes and backslash escapes as in POSIX sh, no expansions).
std::vector<std::string> splitShellWords(std::string_view command);

/// Replaces every `@file` argument of `args` by the words of that file,
/// relative to `directory` (nested ones too), recursively. kNotFound/kIo naming the file when
/// one cannot be read; kInvalidArgument when nesting exceeds
/// kMaxResponseFileDepth (which also catches a file including itself).
/// An `@` alone is kept as an argument.
Result<std::vector<std::string>> expandResponseFiles(std::vector<std::string> args,
                                                     const std::filesystem::path& directory);

/// The object file a compile command writes (see the file comment), relative
/// paths resolved against `directory`; nullopt with `*why` set when the
/// command is not a compile to an object. `output` is the entry's `output`
/// key, `file` its `file` key (both may be empty).
std::optional<std::filesystem::path> objectOutput(const std::vector<std::string>& args,
                                                  const std::filesystem::path& directory,
                                                  std::string_view output, std::string_view file,
                                                  std::string* why);

/// Parses every entry of the database text `json`; `source` names it in
/// messages. kParse for a malformed database (see the file comment).
Result<std::vector<CompileEntry>> parseCompileCommands(std::string_view json,
                                                       std::string_view source);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_COMPILE_ENTRY_H
