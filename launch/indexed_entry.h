//===- launch/indexed_entry.h - a module's entry by its object's name -*- C++ -*-===//
///
/// \file
/// Private to launch/: finding a module's entry before or without its
/// stream, by the object the compile writes and the table's module index
/// (tuning_table.h). The stale route (stale_entry.h) uses it when a changed
/// inlining stream found no entry; the priority route (table_answerer.h)
/// before a regalloc compile starts, since clang asks priorities before the
/// first eviction whose digest would find the entry.
///
/// Errors are values: a module index or entries file that is malformed is
/// kInvalidArgument naming the file (the compile fails, as for the exact
/// route), one that cannot be read kIo. Single-threaded; findIndexedEntry()
/// reads the index and at most one entries file.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_INDEXED_ENTRY_H
#define MLGO_LAUNCH_INDEXED_ENTRY_H

#include "mlgo/launch/tuned_launch.h"

#include <optional>
#include <string>
#include <string_view>

namespace mlgo::launch {

/// The object that names a compile's module: `output` (its `-o`), or, when
/// it names none, the compiler's choice: the source's file name with `.o` for
/// its extension, in the working directory. A ThinLTO backend compiles the
/// module's own object (IR in a `.o`, `-x ir a.o`) into an output lld names
/// after the job (`a.1.<pid>.native.o`): its input is the name, whatever the
/// output.
std::string objectPathOf(std::string_view output, std::string_view source);

/// What findIndexedEntry() found: an entry, or why none.
struct IndexLookup {
  std::optional<TuningEntry> entry;
  std::string why;
  /// False when the table has no module index at all.
  bool indexed = true;
};

/// The entry for a compile of `objectPath` (objectPathOf()) at `optLevel`,
/// reading the profile `profile` (profile_identity.h): the rows of
/// DIR/module-index.json at that level whose module's file name is the
/// object's, narrowed by closestModules(); then that module's entry
/// (TuningTable::lookup of its `first`). None (with why) when the table has
/// no index, no row fits, the path cannot tell several modules apart, or the
/// entry was tuned with another profile. An index row whose entry is not in
/// the table is kInvalidArgument naming the index.
Result<IndexLookup> findIndexedEntry(const TuningTable& table, std::string_view objectPath,
                                     std::string_view optLevel, std::string_view profile);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_INDEXED_ENTRY_H
