//===- ir2vec/number_text.h - shortest round-trip number text ---*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: formats doubles in their shortest form that parses
/// back to the same value (std::to_chars), so vocabularies and embeddings
/// keep full precision without padding digits.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_NUMBER_TEXT_H
#define MLGO_IR2VEC_NUMBER_TEXT_H

#include <charconv>
#include <string>

namespace mlgo::ir2vec::detail {

/// Appends the shortest round-trip text of `value` (finite) to `out`.
inline void appendNumber(std::string& out, double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec; // 32 bytes always suffice for a double
  out.append(buffer, end);
}

/// The double whose shortest text equals the shortest text of the float
/// `value` (0.1f -> 0.1): a float stored in a double-based format without
/// the float's binary noise digits.
inline double floatAsShortDouble(float value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  double result = 0;
  std::from_chars(buffer, end, result);
  (void)ec;
  return result;
}

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_NUMBER_TEXT_H
