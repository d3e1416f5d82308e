/* SHA-256 with streaming interface, HMAC-SHA-256 and a PBKDF2-HMAC-SHA-256 key derivation. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  uint32_t h[8];
  uint8_t buf[64];
  size_t buflen;
  uint64_t total;
} Sha256;

static const uint32_t kK[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static uint32_t load_be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void store_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
static uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
static uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
static uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }

#define ROUND(a, b, c, d, e, f, g, h, i)                                        \
  do {                                                                          \
    uint32_t t1 = h + big_sigma1(e) + ((e & f) ^ (~e & g)) + kK[i] + w[i];      \
    uint32_t t2 = big_sigma0(a) + ((a & b) ^ (a & c) ^ (b & c));                \
    d += t1;                                                                    \
    h = t1 + t2;                                                                \
  } while (0)

static void compress(uint32_t state[8], const uint8_t block[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
  for (int i = 16; i < 64; ++i) w[i] = small_sigma1(w[i - 2]) + w[i - 7] + small_sigma0(w[i - 15]) + w[i - 16];
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; i += 8) {
    ROUND(a, b, c, d, e, f, g, h, i + 0);
    ROUND(h, a, b, c, d, e, f, g, i + 1);
    ROUND(g, h, a, b, c, d, e, f, i + 2);
    ROUND(f, g, h, a, b, c, d, e, i + 3);
    ROUND(e, f, g, h, a, b, c, d, i + 4);
    ROUND(d, e, f, g, h, a, b, c, i + 5);
    ROUND(c, d, e, f, g, h, a, b, i + 6);
    ROUND(b, c, d, e, f, g, h, a, i + 7);
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

static void sha_init(Sha256 *s) {
  static const uint32_t iv[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(s->h, iv, sizeof iv);
  s->buflen = 0;
  s->total = 0;
}

static void sha_update(Sha256 *s, const uint8_t *p, size_t n) {
  s->total += n;
  if (s->buflen) {
    size_t take = 64 - s->buflen < n ? 64 - s->buflen : n;
    memcpy(s->buf + s->buflen, p, take);
    s->buflen += take;
    p += take;
    n -= take;
    if (s->buflen == 64) {
      compress(s->h, s->buf);
      s->buflen = 0;
    }
  }
  while (n >= 64) {
    compress(s->h, p);
    p += 64;
    n -= 64;
  }
  if (n) {
    memcpy(s->buf, p, n);
    s->buflen = n;
  }
}

static void sha_final(Sha256 *s, uint8_t out[32]) {
  uint64_t bits = s->total * 8u;
  uint8_t pad[72] = {0x80};
  size_t padlen = s->buflen < 56 ? 56 - s->buflen : 120 - s->buflen;
  for (int i = 0; i < 8; ++i) pad[padlen + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
  sha_update(s, pad, padlen + 8);
  for (int i = 0; i < 8; ++i) store_be32(out + 4 * i, s->h[i]);
}

static void hmac(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t n, uint8_t out[32]) {
  uint8_t k[64] = {0}, ipad[64], opad[64], inner[32];
  Sha256 s;
  if (keylen > 64) {
    sha_init(&s);
    sha_update(&s, key, keylen);
    sha_final(&s, k);
  } else {
    memcpy(k, key, keylen);
  }
  for (int i = 0; i < 64; ++i) {
    ipad[i] = k[i] ^ 0x36u;
    opad[i] = k[i] ^ 0x5cu;
  }
  sha_init(&s);
  sha_update(&s, ipad, 64);
  sha_update(&s, msg, n);
  sha_final(&s, inner);
  sha_init(&s);
  sha_update(&s, opad, 64);
  sha_update(&s, inner, 32);
  sha_final(&s, out);
}

static void to_hex(const uint8_t *d, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[2 * n] = '\0';
}

/* Writes the lowercase hex SHA-256 of data (65 bytes incl. NUL) into out. */
void sha256_hex(const void *data, size_t n, char out[65]) {
  Sha256 s;
  uint8_t d[32];
  sha_init(&s);
  sha_update(&s, data, n);
  sha_final(&s, d);
  to_hex(d, 32, out);
}

/* Hashes data fed in irregular pieces (sizes from a fixed pattern); must equal sha256_hex. */
void sha256_hex_chunked(const void *data, size_t n, char out[65]) {
  static const size_t pieces[] = {1, 3, 63, 64, 65, 7, 128, 2};
  Sha256 s;
  uint8_t d[32];
  const uint8_t *p = data;
  size_t k = 0;
  sha_init(&s);
  while (n) {
    size_t take = pieces[k++ % 8];
    if (take > n) take = n;
    sha_update(&s, p, take);
    p += take;
    n -= take;
  }
  sha_final(&s, d);
  to_hex(d, 32, out);
}

/* HMAC-SHA-256 as hex. */
void hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t n, char out[65]) {
  uint8_t d[32];
  hmac(key, keylen, msg, n, d);
  to_hex(d, 32, out);
}

/* PBKDF2-HMAC-SHA-256 producing dklen bytes (at most 128) into dk. Returns 0 on success. */
int pbkdf2_sha256(const uint8_t *pw, size_t pwlen, const uint8_t *salt, size_t saltlen, uint32_t iters,
                  uint8_t *dk, size_t dklen) {
  uint8_t msg[128 + 4], u[32], t[32];
  if (saltlen > 128 || dklen > 128 || iters == 0) return -1;
  for (uint32_t block = 1; dklen; ++block) {
    memcpy(msg, salt, saltlen);
    store_be32(msg + saltlen, block);
    hmac(pw, pwlen, msg, saltlen + 4, u);
    memcpy(t, u, 32);
    for (uint32_t i = 1; i < iters; ++i) {
      hmac(pw, pwlen, u, 32, u);
      for (int j = 0; j < 32; ++j) t[j] ^= u[j];
    }
    size_t take = dklen < 32 ? dklen : 32;
    memcpy(dk, t, take);
    dk += take;
    dklen -= take;
  }
  return 0;
}
