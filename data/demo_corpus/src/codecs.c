/* Base64 and hex codecs plus CRC-32 (slicing-by-4 tables) and Adler-32 checksums. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char kHex[] = "0123456789abcdef";

static uint32_t crc_tables[4][256];
static int crc_ready;

static void crc_init(void) {
  if (crc_ready) return;
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_tables[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = crc_tables[0][i];
    for (int t = 1; t < 4; ++t) {
      c = crc_tables[0][c & 0xffu] ^ (c >> 8);
      crc_tables[t][i] = c;
    }
  }
  crc_ready = 1;
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n) {
  crc_init();
  crc = ~crc;
  while (n >= 4) {
    crc ^= (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
    crc = crc_tables[3][crc & 0xffu] ^ crc_tables[2][(crc >> 8) & 0xffu] ^
          crc_tables[1][(crc >> 16) & 0xffu] ^ crc_tables[0][crc >> 24];
    p += 4;
    n -= 4;
  }
  while (n--) crc = crc_tables[0][(crc ^ *p++) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

static uint32_t adler_update(uint32_t adler, const uint8_t *p, size_t n) {
  uint32_t a = adler & 0xffffu, b = adler >> 16;
  while (n) {
    size_t chunk = n < 5552 ? n : 5552;
    n -= chunk;
    while (chunk >= 8) {
      a += p[0]; b += a;
      a += p[1]; b += a;
      a += p[2]; b += a;
      a += p[3]; b += a;
      a += p[4]; b += a;
      a += p[5]; b += a;
      a += p[6]; b += a;
      a += p[7]; b += a;
      p += 8;
      chunk -= 8;
    }
    while (chunk--) {
      a += *p++;
      b += a;
    }
    a %= 65521u;
    b %= 65521u;
  }
  return (b << 16) | a;
}

static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t b64_encode(const uint8_t *in, size_t n, char *out) {
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8) | in[i + 2];
    out[o++] = kB64[(v >> 18) & 63];
    out[o++] = kB64[(v >> 12) & 63];
    out[o++] = kB64[(v >> 6) & 63];
    out[o++] = kB64[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)in[i] << 16;
    if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
    out[o++] = kB64[(v >> 18) & 63];
    out[o++] = kB64[(v >> 12) & 63];
    out[o++] = i + 1 < n ? kB64[(v >> 6) & 63] : '=';
    out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

/* Decodes base64 (standard or URL alphabet, padding optional, whitespace ignored). */
static long b64_decode(const char *in, uint8_t *out, size_t cap) {
  uint32_t acc = 0;
  int bits = 0;
  size_t o = 0;
  for (; *in; ++in) {
    if (*in == '=' ) break;
    if (*in == ' ' || *in == '\n' || *in == '\r' || *in == '\t') continue;
    int v = b64_value(*in);
    if (v < 0) return -1;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (o >= cap) return -1;
      out[o++] = (uint8_t)(acc >> bits);
      acc &= (1u << bits) - 1u;
    }
  }
  return (long)o;
}

static size_t hex_encode(const uint8_t *in, size_t n, char *out) {
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[in[i] >> 4];
    out[2 * i + 1] = kHex[in[i] & 15];
  }
  out[2 * n] = '\0';
  return 2 * n;
}

static long hex_decode(const char *in, uint8_t *out, size_t cap) {
  size_t n = strlen(in);
  if (n % 2) return -1;
  if (n / 2 > cap) return -1;
  for (size_t i = 0; i < n; i += 2) {
    int hi = hex_value(in[i]), lo = hex_value(in[i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i / 2] = (uint8_t)((hi << 4) | lo);
  }
  return (long)(n / 2);
}

/* CRC-32 (IEEE) of a buffer. */
uint32_t codec_crc32(const void *data, size_t n) { return crc_update(0, data, n); }

/* Adler-32 of a buffer. */
uint32_t codec_adler32(const void *data, size_t n) { return adler_update(1, data, n); }

/* Encodes data as base64 into out (needs 4*ceil(n/3)+1 bytes); returns the length. */
size_t codec_base64_encode(const void *data, size_t n, char *out) { return b64_encode(data, n, out); }

/* Decodes base64; returns the byte count or -1 on malformed input or overflow. */
long codec_base64_decode(const char *text, void *out, size_t cap) { return b64_decode(text, out, cap); }

/* Round-trips a buffer through hex and base64 in chunks, verifying each step with both
   checksums. Returns 0 on success, or the 1-based index of the first failing chunk. */
long codec_selftest(const uint8_t *data, size_t n, size_t chunk) {
  char text[2 * 512 + 1];
  uint8_t back[512];
  if (chunk == 0 || chunk > 256) return -1;
  uint32_t crc_all = 0, crc_pieces = 0;
  for (size_t off = 0, idx = 1; off < n; off += chunk, ++idx) {
    size_t len = n - off < chunk ? n - off : chunk;
    const uint8_t *p = data + off;
    hex_encode(p, len, text);
    long got = hex_decode(text, back, sizeof back);
    if (got != (long)len || memcmp(back, p, len) != 0) return (long)idx;
    b64_encode(p, len, text);
    got = b64_decode(text, back, sizeof back);
    if (got != (long)len || crc_update(0, back, len) != crc_update(0, p, len)) return (long)idx;
    if (adler_update(1, back, len) != adler_update(1, p, len)) return (long)idx;
    crc_pieces = crc_update(crc_pieces, back, len);
  }
  crc_all = crc_update(crc_all, data, n);
  return crc_all == crc_pieces ? 0 : -2;
}
