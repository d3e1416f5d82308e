//===- mlgo/table/table_writer.h - writing a tuning directory -----*- C++ -*-===//
///
/// \file
/// The one writer of a tuning directory (tuning_table.h shows the layout,
/// docs/tuning-format.md specifies it): `python -m mlgo_env.tune` writes its
/// tables through it (the Python core binds it), tests write theirs.
///
/// The text is JSON as Python's `json.dumps` writes it (so a table is the
/// same bytes whoever wrote it, and a replay file's table digest holds):
/// `", "` and `": "` between items, the manifest indented by one space per
/// level, non-ASCII characters as `\uXXXX`, a score as Python writes a float
/// (`96.0`, `0.1`, `1e-05`, `1e+16`: the shortest text that reads back as
/// the same double); each file ends with a newline. Entries are filed by
/// entryKey() of their `first`, sorted by module within a file.
///
/// writeTable() checks everything first and writes nothing when anything is
/// wrong (kInvalidArgument naming the entry: what the reader would refuse, a
/// score that is not finite, text that is not UTF-8). Then each file is
/// replaced atomically (a temporary file beside it, renamed), so a reader
/// never sees half a file: the entries files, the index (every entry, once one
/// has site keys or priorities; removed otherwise), the manifest last. Entries files no entry needs any
/// more are removed. kIo naming the file when one cannot be written.
///
/// Pure functions except writeTable(), which one process at a time may call
/// on a directory; thread-safe otherwise.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_TABLE_WRITER_H
#define MLGO_TABLE_TABLE_WRITER_H

#include "mlgo/table/tuning_table.h"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace mlgo::table {

/// What a table is written from.
struct TableContents {
  std::string problem;               ///< "inlining" or "regalloc".
  std::vector<std::string> features; ///< Identity features, sorted, distinct.
  CompilerStamp compiler;
  std::vector<TuningEntry> entries;
};

/// One entry as JSON object text (the form of an entries file's list), e.g.
/// for `tune`'s search state; kInvalidArgument when the entry would be
/// refused (see the file comment).
Result<std::string> entryText(const TuningEntry& entry);

/// Writes the table `contents` into `dir` (created if needed); returns the
/// number of entries written.
Result<size_t> writeTable(const std::filesystem::path& dir, TableContents contents);

} // namespace mlgo::table

#endif // MLGO_TABLE_TABLE_WRITER_H
