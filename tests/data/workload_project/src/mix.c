#include "crunch.h"

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t mix(const uint64_t *data, size_t n, uint64_t seed) {
  uint64_t a = seed, b = ~seed, c = seed * 0x9e3779b97f4a7c15ull, d = seed ^ 0x5555;
  uint64_t e = 1, f = 2, g = 3, h = 4, i = 5, j = 6, k = 7, l = 8, m = 9, o = 10;
  for (size_t t = 0; t < n; ++t) {
    uint64_t x = data[t];
    a += x; b ^= rotl(a, 13); c += b * 3; d ^= rotl(c, 7);
    e += d ^ x; f ^= rotl(e, 17); g += f + a; h ^= rotl(g, 29);
    i += h * 5; j ^= rotl(i, 11); k += j ^ b; l ^= rotl(k, 23);
    m += l + c; o ^= rotl(m, 31);
    if (x & 1) { a ^= o; e += m; i ^= k; }
    if (x & 2) { b += l; f ^= j; m += h; }
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ o;
}
