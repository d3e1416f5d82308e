//===- corpus/object_list.h - which objects to extract ----------*- C++ -*-===//
///
/// \file
/// Turns the input of `corpus extract` (a compile_commands.json or a build
/// directory) into the list of object files and their module names.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_OBJECT_LIST_H
#define MLGO_CORPUS_OBJECT_LIST_H

#include "mlgo/corpus/compile_entry.h"
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
  std::filesystem::path object; ///< Absolute, normalised object path.
  std::string name;             ///< Module name: object path relative to its base.
  std::optional<ObjectIssue> issue;
  std::size_t entry = 0;  ///< From a database: the CompileEntry's position.
  std::size_t output = 0; ///< From a database: the position in the entry's objects.
};

/// The objects of an input, with notes for the user (see ExtractSummary).
struct ObjectList {
  std::vector<ObjectJob> jobs;
  std::vector<std::string> notes;
};

/// Objects written by the entries of a compile_commands.json text (see
/// compile_entry.h), one job per object (an entry compiling several sources
/// gives several; one that writes none gives one job with its issue).
/// Without `objBaseDir`, an object inside its entry's `directory` is named
/// relative to it; the others are named relative to the deepest directory
/// holding all of them, which a note reports. With `objBaseDir`, every
/// object is named relative to it (kBadName if outside). `source` names the
/// file in errors; kParse for a malformed database.
Result<ObjectList>
objectsFromCompileCommands(std::string_view json, std::string_view source,
                           const std::optional<std::filesystem::path>& objBaseDir);

/// objectsFromCompileCommands() of entries already parsed.
ObjectList objectsFromEntries(const std::vector<CompileEntry>& entries,
                              const std::optional<std::filesystem::path>& objBaseDir);

/// Every regular file under `dir` whose name ends in `suffix` (".o", or
/// ".3.import.bc" for a ThinLTO link), sorted by path; the object is the path
/// without `stripSuffix` (empty: the file itself), named relative to
/// `objBaseDir` (default `dir`). kNotFound / kIo if `dir` cannot be walked.
Result<ObjectList> objectsFromDirectory(const std::filesystem::path& dir,
                                        const std::optional<std::filesystem::path>& objBaseDir,
                                        std::string_view suffix = ".o",
                                        std::string_view stripSuffix = "");

/// Marks every job whose object or name repeats an earlier one as kDuplicate.
void markDuplicates(std::vector<ObjectJob>& jobs);

/// The deepest directory containing every path of `paths` (each absolute and
/// normalised); "/" if they share nothing more. Empty input gives "".
std::filesystem::path commonRoot(const std::vector<std::filesystem::path>& paths);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_OBJECT_LIST_H
