//===- table/json_writing.h - JSON text as Python's json.dumps writes it -*- C++ -*-===//
///
/// \file
/// Private to table/: the pieces of the table writer's JSON (table_writer.h)
/// that must read as Python's `json.dumps` (ensure_ascii, the default float
/// repr) writes them. Pure functions; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_JSON_WRITING_H
#define MLGO_TABLE_JSON_WRITING_H

#include <string>
#include <string_view>

namespace mlgo::table {

/// Appends `text` as a JSON string literal: `"` and `\` escaped, `\n`, `\r`,
/// `\t`, `\b`, `\f` by name, every other character outside ' '..'~' as
/// `\uXXXX` (lower-case hex; UTF-16 surrogate pairs above U+FFFF). False,
/// appending nothing, when `text` is not UTF-8.
bool appendQuoted(std::string& out, std::string_view text);

/// A finite double as Python's repr(float) writes it: the shortest digits
/// that read back as the same double, in positional notation when the
/// decimal exponent is from -5 to 15 (with ".0" when whole: `96.0`, `0.0001`),
/// else in exponent notation (`1e-05`, `1.5e+16`).
std::string floatText(double value);

} // namespace mlgo::table

#endif // MLGO_TABLE_JSON_WRITING_H
