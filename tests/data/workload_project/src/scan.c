#include "crunch.h"

/* Both paths of the loop keep fourteen values live. The first is hinted as rare but is
   taken for nearly every word, so the static block frequencies the static cost weighs
   spills and reloads by are wrong here; the workload's counts are not. */
uint64_t scan(const uint64_t *data, size_t n, uint64_t seed) {
  uint64_t a = seed, b = seed + 1, c = seed + 2, d = seed + 3, e = seed + 4, f = seed + 5;
  uint64_t g = seed + 6, h = seed + 7, i = seed + 8, j = seed + 9, k = seed + 10;
  uint64_t l = seed + 11, m = seed + 12, o = seed + 13;
  for (size_t t = 0; t < n; ++t) {
    uint64_t x = data[t];
    if (__builtin_expect(x & 0xff, 0)) {
      a += x * b; b ^= c + (x >> 3); c += d * e; d ^= e + (x >> 5);
      e += f * g; f ^= g + (x >> 7); g += h * i; h ^= i + (x >> 9);
      i += j * k; j ^= k + (x >> 11); k += l * m; l ^= m + (x >> 13);
      m += o * a; o ^= a + (x >> 15);
    } else {
      a -= x * o; o += b * c; b -= x * d; d += e * f; f -= x * g; g += h * i;
      i -= x * j; j += k * l; l -= x * m; m += a * b; c -= x * e; e += g * k;
      h ^= a * m; k ^= o * f;
    }
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ o;
}
