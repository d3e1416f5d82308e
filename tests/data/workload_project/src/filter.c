#include "crunch.h"

int64_t filter(const int32_t *in, int32_t *out, size_t n, const int32_t *taps) {
  int32_t t0 = taps[0], t1 = taps[1], t2 = taps[2], t3 = taps[3], t4 = taps[4];
  int32_t t5 = taps[5], t6 = taps[6], t7 = taps[7], t8 = taps[8], t9 = taps[9];
  int32_t t10 = taps[10], t11 = taps[11];
  int64_t sum = 0, lo = 0, hi = 0;
  for (size_t i = 11; i < n; ++i) {
    int64_t acc = (int64_t)t0 * in[i] + (int64_t)t1 * in[i - 1] + (int64_t)t2 * in[i - 2] +
                  (int64_t)t3 * in[i - 3] + (int64_t)t4 * in[i - 4] + (int64_t)t5 * in[i - 5] +
                  (int64_t)t6 * in[i - 6] + (int64_t)t7 * in[i - 7] + (int64_t)t8 * in[i - 8] +
                  (int64_t)t9 * in[i - 9] + (int64_t)t10 * in[i - 10] + (int64_t)t11 * in[i - 11];
    int32_t v = (int32_t)(acc >> 8);
    out[i] = v;
    sum += v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return sum ^ (lo * 31) ^ (hi * 17);
}
