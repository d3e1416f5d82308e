//===- mlgo/policy/json_text.h - JSON as the policy layer writes it -*- C++ -*-===//
///
/// \file
/// How policy files are written, and how a refusal shows an offending value:
/// one writer, so a message shows a value as a file would hold it (the
/// Python package's core also hands a policy's metadata to Python this way).
/// Pure functions of their arguments; safe from any thread.
///
///  - A number is the shortest text that reads back as the same double; a
///    whole number below 2^63 in magnitude is written as an integer (`0`,
///    `-3`, `1.5`, `1e+20`, `1e-05`), except -0.0, written `-0.0` so that
///    its sign survives. An integer the JSON parser kept as one (a uint64)
///    is written exactly. NaN and infinities, which JSON does not have, show
///    as `NaN`, `Infinity`, `-Infinity` (in messages; Policy::text() refuses
///    them).
///  - Strings are quoted and escaped as JSON requires (`"`, `\`, control
///    characters). An object's keys come in `keyOrder` first (those it has),
///    then the others sorted (llvm::json keeps no order).
///  - Indented text keeps a value on one line when its compact form fits in
///    100 columns, else puts one element per line, one space deeper.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_JSON_TEXT_H
#define MLGO_POLICY_JSON_TEXT_H

#include <llvm/Support/JSON.h>

#include <span>
#include <string>
#include <string_view>

namespace mlgo::policy {

/// A number as a file holds it (see the file comment).
std::string numberText(double value);
/// A JSON string literal.
std::string quotedText(std::string_view text);
/// `value` as JSON text: compact (`[1, 2]`, `{"a": 1}`), or indented, the
/// value starting on a line `depth` spaces deep.
std::string jsonText(const llvm::json::Value& value, bool indented = false, size_t depth = 0,
                     std::span<const std::string_view> keyOrder = {});
/// An offending value for a message: compact JSON, `null` for an absent key
/// (as a reader sees it), cut to 60 characters and "..." when longer.
std::string shownValue(const llvm::json::Value* value);

} // namespace mlgo::policy

#endif // MLGO_POLICY_JSON_TEXT_H
