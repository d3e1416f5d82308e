#include "common.h"

int scale = 3;

static long square(long x) { return x * x; }

static long side(const int *sides, size_t i, size_t n) {
  long s = clamp(sides[i % n], 0, 1000) * (long)scale;
  return s + square(s % 7) - (long)(i & 1);
}

static long tri(long a, long b, long c) {
  long p = a + b + c;
  return square(p) - square(a) - square(b) - square(c) + (a ^ b ^ c);
}

long geom_area(const int *sides, size_t n) {
  long total = 0;
  for (size_t i = 0; i + 2 < n; ++i)
    total += tri(side(sides, i, n), side(sides, i + 1, n), side(sides, i + 2, n));
  return total;
}

long geom_perimeter(const int *sides, size_t n) {
  long total = 0;
  for (size_t i = 0; i < n; ++i)
    total += side(sides, i, n);
  return total;
}

long geom_score(const int *sides, size_t n) {
#ifdef PIC
  long bias = 1; /* libtool's shared twin is compiled with -fPIC -DPIC */
#else
  long bias = 0;
#endif
  return geom_area(sides, n) / 3 + tri(n, scale, bias) + side(sides, n / 2, n);
}
