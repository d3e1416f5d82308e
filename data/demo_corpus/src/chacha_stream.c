/* ChaCha20 stream cipher (RFC 8439 layout), a keystream-based random generator and a keyed checksum. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  uint32_t input[16];
  uint8_t keystream[64];
  size_t used;
} ChaCha;

typedef struct {
  ChaCha cipher;
  uint64_t produced;
} ChaChaRng;

static uint32_t rotl32(uint32_t v, unsigned n) { return (v << n) | (v >> (32 - n)); }

static uint32_t load_le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void store_le32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

#define QR(a, b, c, d)           \
  do {                           \
    a += b; d ^= a; d = rotl32(d, 16); \
    c += d; b ^= c; b = rotl32(b, 12); \
    a += b; d ^= a; d = rotl32(d, 8);  \
    c += d; b ^= c; b = rotl32(b, 7);  \
  } while (0)

static void chacha_block(const uint32_t in[16], uint8_t out[64], int rounds) {
  uint32_t x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3];
  uint32_t x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
  uint32_t x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11];
  uint32_t x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];
  for (int i = 0; i < rounds; i += 2) {
    QR(x0, x4, x8, x12);
    QR(x1, x5, x9, x13);
    QR(x2, x6, x10, x14);
    QR(x3, x7, x11, x15);
    QR(x0, x5, x10, x15);
    QR(x1, x6, x11, x12);
    QR(x2, x7, x8, x13);
    QR(x3, x4, x9, x14);
  }
  uint32_t x[16] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15};
  for (int i = 0; i < 16; ++i) store_le32(out + 4 * i, x[i] + in[i]);
}

static void chacha_setup(ChaCha *c, const uint8_t key[32], const uint8_t nonce[12], uint32_t counter) {
  static const uint8_t sigma[16] = {'e', 'x', 'p', 'a', 'n', 'd', ' ', '3', '2', '-', 'b', 'y', 't', 'e', ' ', 'k'};
  for (int i = 0; i < 4; ++i) c->input[i] = load_le32(sigma + 4 * i);
  for (int i = 0; i < 8; ++i) c->input[4 + i] = load_le32(key + 4 * i);
  c->input[12] = counter;
  for (int i = 0; i < 3; ++i) c->input[13 + i] = load_le32(nonce + 4 * i);
  c->used = 64;
}

static void chacha_refill(ChaCha *c) {
  chacha_block(c->input, c->keystream, 20);
  c->input[12]++;
  c->used = 0;
}

static void chacha_xor(ChaCha *c, const uint8_t *in, uint8_t *out, size_t n) {
  while (n) {
    if (c->used == 64) chacha_refill(c);
    size_t take = 64 - c->used < n ? 64 - c->used : n;
    for (size_t i = 0; i < take; ++i) out[i] = in[i] ^ c->keystream[c->used + i];
    c->used += take;
    in += take;
    out += take;
    n -= take;
  }
}

static void rng_seed(ChaChaRng *r, uint64_t seed) {
  uint8_t key[32], nonce[12] = {0};
  uint64_t z = seed;
  for (int i = 0; i < 4; ++i) {
    z += 0x9e3779b97f4a7c15ull;
    uint64_t m = z;
    m = (m ^ (m >> 30)) * 0xbf58476d1ce4e5b9ull;
    m = (m ^ (m >> 27)) * 0x94d049bb133111ebull;
    m ^= m >> 31;
    for (int b = 0; b < 8; ++b) key[8 * i + b] = (uint8_t)(m >> (8 * b));
  }
  chacha_setup(&r->cipher, key, nonce, 0);
  r->produced = 0;
}

static uint32_t rng_next32(ChaChaRng *r) {
  ChaCha *c = &r->cipher;
  if (c->used + 4 > 64) chacha_refill(c);
  uint32_t v = load_le32(c->keystream + c->used);
  c->used += 4;
  r->produced++;
  return v;
}

static uint32_t rng_below(ChaChaRng *r, uint32_t bound) {
  uint32_t threshold = (0u - bound) % bound;
  for (;;) {
    uint32_t v = rng_next32(r);
    if (v >= threshold) return v % bound;
  }
}

/* Encrypts (or decrypts) n bytes in place with key/nonce starting at block counter. */
void chacha20_crypt(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t *buf, size_t n) {
  ChaCha c;
  chacha_setup(&c, key, nonce, counter);
  chacha_xor(&c, buf, buf, n);
}

/* Writes the raw 64-byte block for (key, nonce, counter); used for known-answer tests. */
void chacha20_block(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t out[64]) {
  ChaCha c;
  chacha_setup(&c, key, nonce, counter);
  chacha_block(c.input, out, 20);
}

/* Shuffles 0..n-1 with a ChaCha-driven Fisher-Yates and returns a position-weighted digest. */
uint64_t chacha_shuffle_digest(uint64_t seed, uint32_t *perm, uint32_t n) {
  ChaChaRng r;
  rng_seed(&r, seed);
  for (uint32_t i = 0; i < n; ++i) perm[i] = i;
  for (uint32_t i = n; i > 1; --i) {
    uint32_t j = rng_below(&r, i);
    uint32_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
  uint64_t d = r.produced;
  for (uint32_t i = 0; i < n; ++i) d = d * 1099511628211ull + (uint64_t)perm[i] * (i + 1u);
  return d;
}

/* A keyed checksum: the message is encrypted in 64-byte chunks and the ciphertext words are
   folded with rotating sums. Not a real MAC; it exercises the cipher on odd lengths. */
uint64_t chacha_keyed_checksum(const uint8_t key[32], const uint8_t *msg, size_t n) {
  uint8_t nonce[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint8_t chunk[64];
  ChaCha c;
  uint64_t s0 = 0x736f6d6570736575ull, s1 = 0x646f72616e646f6dull;
  chacha_setup(&c, key, nonce, 7);
  while (n) {
    size_t take = n < 64 ? n : 64;
    memset(chunk, 0, sizeof chunk);
    memcpy(chunk, msg, take);
    chacha_xor(&c, chunk, chunk, 64);
    for (int i = 0; i < 64; i += 8) {
      uint64_t w = (uint64_t)load_le32(chunk + i) | ((uint64_t)load_le32(chunk + i + 4) << 32);
      s0 += w;
      s1 ^= s0;
      s0 = (s0 << 13) | (s0 >> 51);
      s1 += s0 * 5u;
    }
    msg += take;
    n -= take;
  }
  return s0 ^ (s1 >> 7) ^ (uint64_t)c.input[12];
}
