//===- policy/python_repr.h - JSON values as Python shows them --*- C++ -*-===//
///
/// The policy readers name an offending value in their messages; the Python
/// reader shows it with repr() of what `json` parsed, and this shows an
/// llvm::json::Value the same way, so both readers' messages are equal:
/// None, True, 'text' (double quotes when the text holds a ' and no "),
/// 7, 2.5, 2.0, -0.0, inf, 1e+20, [1, 'a'], {'k': None}.
///
/// What the JSON value no longer knows stays different: an object's keys
/// come sorted (Python keeps the file's order), a negative whole number
/// written with a fraction (`-2.0`) shows as `-2`, and an integer beyond
/// 64 bits shows as the double it became (Python keeps it exact).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_PYTHON_REPR_H
#define MLGO_POLICY_PYTHON_REPR_H

#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::policy {

/// repr() of the value Python's json would have parsed; a null pointer (an
/// absent key) is None, as dict.get() gives.
std::string pythonRepr(const llvm::json::Value* value);

/// repr() of a Python float: the shortest digits that round-trip, fixed
/// notation for exponents -4 to 15 (with ".0" when whole), else scientific
/// with a signed two-digit-or-more exponent; inf, -inf, nan.
std::string pythonFloatRepr(double value);

} // namespace mlgo::policy

#endif // MLGO_POLICY_PYTHON_REPR_H
