//===- corpus/object_list.h - which objects to extract ----------*- C++ -*-===//
///
/// \file
/// Turns the input of `corpus extract` (a compile_commands.json or a build
/// directory) into the list of object files and their module names.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_OBJECT_LIST_H
#define MLGO_CORPUS_OBJECT_LIST_H

#include "mlgo/corpus/extract.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus::detail {

/// One object to extract, or the reason it cannot be (then `issue` is set and
/// `name` may be empty).
struct ObjectJob {
  std::filesystem::path object; ///< Absolute (or base-relative) object path.
  std::string name;             ///< Module name: object path relative to its base.
  std::optional<ObjectIssue> issue;
};

/// Splits a shell command line into words (whitespace separated; single and
/// double quotes and backslash escapes as in POSIX sh, no expansions).
std::vector<std::string> splitShellWords(std::string_view command);

/// Objects named by the `-o` of each entry of a compile_commands.json text.
/// `source` names the file in errors; `objBaseDir` overrides each entry's
/// `directory`. kParse if the text is not a JSON array of objects with
/// `directory` and `arguments` or `command`.
Result<std::vector<ObjectJob>>
objectsFromCompileCommands(std::string_view json, std::string_view source,
                           const std::optional<std::filesystem::path>& objBaseDir);

/// Every regular `*.o` file under `dir`, sorted by path, named relative to
/// `objBaseDir` (default `dir`). kNotFound / kIo if `dir` cannot be walked.
Result<std::vector<ObjectJob>>
objectsFromDirectory(const std::filesystem::path& dir,
                     const std::optional<std::filesystem::path>& objBaseDir);

/// Marks every job whose name repeats an earlier one as kDuplicate.
void markDuplicates(std::vector<ObjectJob>& jobs);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_OBJECT_LIST_H
