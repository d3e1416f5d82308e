#include "lib.h"

static double at(const double *a, int n, int i, int j) { return a[i * n + j]; }
static void set(double *a, int n, int i, int j, double v) { a[i * n + j] = v; }

static uint32_t next_random(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

void mat_fill(double *a, int n, uint32_t seed) {
  uint32_t s = seed ? seed : 1;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      set(a, n, i, j, (double)(next_random(&s) % 1000) / 100.0 - 5.0);
}

void mat_mul(const double *a, const double *b, double *c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k)
        sum += at(a, n, i, k) * at(b, n, k, j);
      set(c, n, i, j, sum);
    }
}

double mat_trace(const double *a, int n) {
  double t = 0;
  for (int i = 0; i < n; ++i)
    t += at(a, n, i, i);
  return t;
}

double mat_checksum(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      s += at(a, n, i, j) * (double)((i * 31 + j * 17) % 7 + 1);
  return s;
}
