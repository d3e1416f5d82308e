/* Register-pressure kernels for the protocol golden test: many values live at
 * once, so the greedy allocator must evict and choose priorities. */
#include <stdint.h>

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return ROTR(a, 7) ^ (b + ROTR(c, 13)) ^ (d * 0x9e3779b1u);
}

void compress_block(uint32_t state[8], const uint32_t w_in[16]) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = w_in[i];
  for (int i = 16; i < 64; ++i)
    w[i] = w[i - 16] + (ROTR(w[i - 15], 7) ^ (w[i - 15] >> 3)) + w[i - 7] +
           (ROTR(w[i - 2], 17) ^ (w[i - 2] >> 10));
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + w[i] +
                  0x428a2f98u * (uint32_t)i;
    uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  state[0] += a; state[1] += b; state[2] += c; state[3] += d;
  state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

double stencil(const double *in, double *out, int n, double k0, double k1, double k2, double k3) {
  double acc = 0;
  for (int i = 4; i < n - 4; ++i) {
    double v = k0 * in[i] + k1 * (in[i - 1] + in[i + 1]) + k2 * (in[i - 2] + in[i + 2]) +
               k3 * (in[i - 3] + in[i + 3]) + (in[i - 4] * in[i + 4]) / (1.0 + k0 * k1);
    out[i] = v;
    acc += v * k2 - in[i] * k3;
  }
  return acc;
}

uint32_t hash_all(const uint32_t *data, int n, uint32_t seed) {
  uint32_t h0 = seed, h1 = seed ^ 0x55u, h2 = seed * 3u, h3 = ~seed, h4 = seed + 7u, h5 = seed >> 3;
  uint32_t h6 = seed << 5, h7 = seed ^ 0xa5a5a5a5u, h8 = seed * 31u, h9 = seed + 0x1234u;
  for (int i = 0; i < n; ++i) {
    uint32_t x = data[i];
    h0 = mix(h0, x, h9, h1); h1 = mix(h1, h0, x, h2); h2 = mix(h2, h1, h8, x);
    h3 = mix(h3, h2, x, h4); h4 = mix(h4, h3, h7, x); h5 = mix(h5, x, h4, h6);
    h6 = mix(h6, h5, x, h0); h7 = mix(h7, h6, h3, x); h8 = mix(h8, x, h7, h2);
    h9 = mix(h9, h8, x, h5);
  }
  return h0 ^ h1 ^ h2 ^ h3 ^ h4 ^ h5 ^ h6 ^ h7 ^ h8 ^ h9;
}
