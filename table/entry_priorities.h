//===- table/entry_priorities.h - an entry's register priorities -*- C++ -*-===//
///
/// \file
/// Private to table/: reading and writing a regalloc entry's `priorities`
/// (tuning_table.h shows the form, docs/tuning-format.md specifies it), for
/// the one reader (tuning_table.cc) and the one writer (table_writer.cc).
/// Pure functions; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_ENTRY_PRIORITIES_H
#define MLGO_TABLE_ENTRY_PRIORITIES_H

#include "mlgo/table/tuning_table.h"

#include <llvm/Support/JSON.h>

#include <optional>
#include <string>

namespace mlgo::table {

/// The `priorities` member of entry object `o` of module `module`; none when
/// absent. kInvalidArgument naming `where` and the module: not an object, a
/// `questions` that is not a count, `functions` not an object of objects, a
/// step that is not a decimal index, a multiplier that is not a finite
/// number >= 0.
Result<std::optional<EntryPriorities>> parsePriorities(const llvm::json::Object& o,
                                                       const std::string& module,
                                                       const std::string& where);

/// What the reader would refuse in `priorities` (the message starts with
/// `what`), or success.
Status checkPriorities(const EntryPriorities& priorities, const std::string& what);

/// Appends `, "priorities": {...}` as Python's json.dumps writes it (steps
/// in increasing order); false, appending nothing, when a function name is
/// not UTF-8. `priorities` must have passed checkPriorities().
bool appendPriorities(std::string& out, const EntryPriorities& priorities);

} // namespace mlgo::table

#endif // MLGO_TABLE_ENTRY_PRIORITIES_H
