//===- table/sha256.cc - SHA-256 of a whole buffer, fast where it can -----===//
#include "mlgo/table/sha256.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/SHA256.h>

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mlgo::table {

Sha256Digest sha256Portable(std::span<const uint8_t> data) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(data.data(), data.size()));
}

#if defined(__x86_64__)
namespace {

/// The 64 round constants (FIPS 180-4, 4.2.2).
alignas(16) constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

bool cpuHasShaExtensions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return false;
  bool ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return false;
  return ssse3 && sse41 && ((b >> 29) & 1);
}

#define MLGO_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

/// Four rounds: `w` holds message words i..i+3 (i = 4 * quad); the rounds
/// instruction takes two rounds' sums at a time, in the low half of its input.
MLGO_SHA_TARGET inline void fourRounds(__m128i& abef, __m128i& cdgh, __m128i w, int quad) {
  __m128i sum = _mm_add_epi32(w, _mm_load_si128(reinterpret_cast<const __m128i*>(kRound) + quad));
  cdgh = _mm_sha256rnds2_epu32(cdgh, abef, sum);
  abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(sum, 0x0E));
}

/// Compresses `blocks` 64-byte blocks of `data` into `state` (the eight hash
/// words, in the instructions' order: `abef` and `cdgh`).
MLGO_SHA_TARGET void compress(__m128i& abef, __m128i& cdgh, const uint8_t* data,
                              size_t blocks) {
  // Message words are big-endian: swap the bytes of each 32-bit lane.
  const __m128i bigEndian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i savedAbef = abef, savedCdgh = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; ++i)
      w[i] = _mm_shuffle_epi8(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)), bigEndian);
    // Quads 0-3 use the block's own words. The words of quad q >= 4 replace
    // those of quad q-4 in w[q % 4]: msg1 starts them from quads q-4 and q-3
    // (after quad q-3's rounds), msg2 finishes them from quads q-2 and q-1
    // (after quad q-1's rounds, before msg1 overwrites quad q-2's words).
    for (int quad = 0; quad < 16; ++quad) {
      const __m128i current = w[quad % 4];
      fourRounds(abef, cdgh, current, quad);
      __m128i& earlier = w[(quad + 3) % 4]; // quad - 1, later quad + 3
      if (quad >= 3 && quad <= 14) {
        __m128i& next = w[(quad + 1) % 4];
        next = _mm_sha256msg2_epu32(_mm_add_epi32(next, _mm_alignr_epi8(current, earlier, 4)),
                                    current);
      }
      if (quad >= 1 && quad <= 12)
        earlier = _mm_sha256msg1_epu32(earlier, current);
    }
    abef = _mm_add_epi32(abef, savedAbef);
    cdgh = _mm_add_epi32(cdgh, savedCdgh);
  }
}

MLGO_SHA_TARGET Sha256Digest sha256WithExtensions(std::span<const uint8_t> data) {
  // {a,b,c,d}, {e,f,g,h} -> the instructions' {a,b,e,f}, {c,d,g,h}, highest lane first.
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kInitial));
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kInitial + 4));
  __m128i cdab = _mm_shuffle_epi32(abcd, 0xB1);
  efgh = _mm_shuffle_epi32(efgh, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  size_t whole = data.size() / 64;
  compress(abef, cdgh, data.data(), whole);
  // The tail, 0x80, zeros and the length in bits (big-endian): one or two blocks.
  uint8_t last[128] = {};
  size_t rest = data.size() - whole * 64;
  std::memcpy(last, data.data() + whole * 64, rest);
  last[rest] = 0x80;
  size_t tailBlocks = rest + 1 + 8 <= 64 ? 1 : 2;
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i)
    last[tailBlocks * 64 - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  compress(abef, cdgh, last, tailBlocks);
  // Back to {a,b,c,d}, {e,f,g,h}, each word big-endian.
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  abcd = _mm_blend_epi16(feba, dchg, 0xF0);
  efgh = _mm_alignr_epi8(dchg, feba, 8);
  uint32_t words[8];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(words), abcd);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(words + 4), efgh);
  Sha256Digest out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = static_cast<uint8_t>(words[i] >> (24 - 8 * j));
  return out;
}

} // namespace

bool sha256UsesCpuExtensions() {
  static const bool has = cpuHasShaExtensions(); // a property of the machine
  return has;
}

Sha256Digest sha256(std::span<const uint8_t> data) {
  return sha256UsesCpuExtensions() ? sha256WithExtensions(data) : sha256Portable(data);
}

#else

bool sha256UsesCpuExtensions() { return false; }

Sha256Digest sha256(std::span<const uint8_t> data) { return sha256Portable(data); }

#endif

} // namespace mlgo::table
