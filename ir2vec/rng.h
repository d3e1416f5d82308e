//===- ir2vec/rng.h - small portable seeded random numbers ------*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: a counter-friendly generator whose output is the same
/// on every platform and standard library (std::uniform_*_distribution and
/// std::shuffle are not), so seeded runs reproduce exactly.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_RNG_H
#define MLGO_IR2VEC_RNG_H

#include <cstddef>
#include <cstdint>
#include <utility>

namespace mlgo::ir2vec::detail {

__extension__ typedef unsigned __int128 Uint128;

/// SplitMix64 step: a good 64-bit mix of `x`.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A stream seeded from any number of integers, e.g. (seed, epoch, index):
/// independent streams for independent keys, with no shared state.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(mix64(seed)) {}
  Rng(uint64_t a, uint64_t b) : state_(mix64(mix64(a) ^ b)) {}
  Rng(uint64_t a, uint64_t b, uint64_t c) : state_(mix64(mix64(mix64(a) ^ b) ^ c)) {}

  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; the tiny
  /// bias for huge bounds is irrelevant here).
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<Uint128>(next()) * bound) >> 64);
  }

  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Fisher-Yates shuffle of [first, first + count).
  template <typename T> void shuffle(T* first, size_t count) {
    for (size_t i = count; i > 1; --i)
      std::swap(first[i - 1], first[below(i)]);
  }

private:
  uint64_t state_;
};

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_RNG_H
