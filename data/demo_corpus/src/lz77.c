/* LZ77-style compressor with hash chains and lazy matching, its decompressor, and a round-trip check. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LZ_WINDOW 32768u
#define LZ_HASH_BITS 13
#define LZ_HASH_SIZE (1u << LZ_HASH_BITS)
#define LZ_MIN_MATCH 3u
#define LZ_MAX_MATCH 130u
#define LZ_MAX_LITERALS 128u
#define LZ_CHAIN_LIMIT 48

typedef struct {
  int32_t head[LZ_HASH_SIZE];
  int32_t *prev;
  const uint8_t *src;
  size_t n;
  uint8_t *out;
  size_t cap;
  size_t len;
  size_t lit_start;
  size_t lit_count;
  int overflow;
} LzEncoder;

typedef struct {
  size_t length;
  size_t distance;
} Match;

static uint32_t hash3(const uint8_t *p) {
  uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
  return (v * 2654435761u) >> (32 - LZ_HASH_BITS);
}

static void put_byte(LzEncoder *e, uint8_t b) {
  if (e->len < e->cap)
    e->out[e->len++] = b;
  else
    e->overflow = 1;
}

static void flush_literals(LzEncoder *e) {
  while (e->lit_count) {
    size_t run = e->lit_count < LZ_MAX_LITERALS ? e->lit_count : LZ_MAX_LITERALS;
    put_byte(e, (uint8_t)(run - 1));
    for (size_t i = 0; i < run; ++i) put_byte(e, e->src[e->lit_start + i]);
    e->lit_start += run;
    e->lit_count -= run;
  }
}

static void emit_literal(LzEncoder *e, size_t pos) {
  if (!e->lit_count) e->lit_start = pos;
  e->lit_count++;
}

static void emit_match(LzEncoder *e, Match m) {
  flush_literals(e);
  put_byte(e, (uint8_t)(0x80u | (m.length - LZ_MIN_MATCH)));
  put_byte(e, (uint8_t)(m.distance & 0xffu));
  put_byte(e, (uint8_t)(m.distance >> 8));
}

static void insert_hash(LzEncoder *e, size_t pos) {
  if (pos + LZ_MIN_MATCH > e->n) return;
  uint32_t h = hash3(e->src + pos);
  e->prev[pos] = e->head[h];
  e->head[h] = (int32_t)pos;
}

static size_t common_length(const uint8_t *a, const uint8_t *b, size_t limit) {
  size_t k = 0;
  while (k + 4 <= limit && a[k] == b[k] && a[k + 1] == b[k + 1] && a[k + 2] == b[k + 2] && a[k + 3] == b[k + 3])
    k += 4;
  while (k < limit && a[k] == b[k]) ++k;
  return k;
}

static Match find_match(const LzEncoder *e, size_t pos) {
  Match best = {0, 0};
  if (pos + LZ_MIN_MATCH > e->n) return best;
  size_t limit = e->n - pos < LZ_MAX_MATCH ? e->n - pos : LZ_MAX_MATCH;
  int32_t cand = e->head[hash3(e->src + pos)];
  for (int steps = 0; cand >= 0 && steps < LZ_CHAIN_LIMIT; ++steps) {
    size_t c = (size_t)cand;
    if (pos - c > LZ_WINDOW - 1) break;
    if (e->src[c + best.length] == e->src[pos + best.length] || best.length == 0) {
      size_t len = common_length(e->src + c, e->src + pos, limit);
      if (len > best.length) {
        best.length = len;
        best.distance = pos - c;
        if (len == limit) break;
      }
    }
    cand = e->prev[c];
  }
  if (best.length < LZ_MIN_MATCH) best.length = 0;
  return best;
}

static long compress_buffer(const uint8_t *src, size_t n, uint8_t *out, size_t cap) {
  LzEncoder *e = malloc(sizeof *e);
  if (!e) return -1;
  e->prev = malloc((n ? n : 1) * sizeof(int32_t));
  if (!e->prev) {
    free(e);
    return -1;
  }
  for (size_t i = 0; i < LZ_HASH_SIZE; ++i) e->head[i] = -1;
  e->src = src;
  e->n = n;
  e->out = out;
  e->cap = cap;
  e->len = e->lit_start = e->lit_count = 0;
  e->overflow = 0;
  size_t pos = 0;
  while (pos < n) {
    Match m = find_match(e, pos);
    insert_hash(e, pos);
    if (m.length && pos + 1 < n) {
      Match lazy = find_match(e, pos + 1);
      if (lazy.length > m.length + 1) {
        emit_literal(e, pos);
        ++pos;
        m = lazy;
        insert_hash(e, pos);
      }
    }
    if (!m.length) {
      emit_literal(e, pos);
      ++pos;
      continue;
    }
    emit_match(e, m);
    for (size_t k = 1; k < m.length; ++k) insert_hash(e, pos + k);
    pos += m.length;
  }
  flush_literals(e);
  long result = e->overflow ? -1 : (long)e->len;
  free(e->prev);
  free(e);
  return result;
}

static long decompress_buffer(const uint8_t *in, size_t n, uint8_t *out, size_t cap) {
  size_t i = 0, o = 0;
  while (i < n) {
    uint8_t ctl = in[i++];
    if (!(ctl & 0x80u)) {
      size_t run = (size_t)ctl + 1;
      if (i + run > n || o + run > cap) return -1;
      memcpy(out + o, in + i, run);
      i += run;
      o += run;
      continue;
    }
    if (i + 2 > n) return -1;
    size_t len = (size_t)(ctl & 0x7fu) + LZ_MIN_MATCH;
    size_t dist = (size_t)in[i] | ((size_t)in[i + 1] << 8);
    i += 2;
    if (dist == 0 || dist > o || o + len > cap) return -1;
    for (size_t k = 0; k < len; ++k, ++o) out[o] = out[o - dist];
  }
  return (long)o;
}

/* Compresses src into out; returns compressed size or -1 if out is too small. */
long lz_compress(const void *src, size_t n, void *out, size_t cap) { return compress_buffer(src, n, out, cap); }

/* Decompresses; returns the decompressed size or -1 on corrupt input or overflow. */
long lz_decompress(const void *src, size_t n, void *out, size_t cap) { return decompress_buffer(src, n, out, cap); }

/* Generates a compressible pseudo-text of n bytes, round-trips it and returns the compressed
   size, or -1 on mismatch/allocation failure. */
long lz_roundtrip_synthetic(size_t n, uint32_t seed) {
  static const char *const words[] = {"alpha ", "beta ", "gamma ", "delta ", "register ", "spill ",
                                      "inline ", "call ", "loop ", "vector "};
  uint8_t *src = malloc(n + 1), *packed = malloc(n + n / 64 + 16), *back = malloc(n + 1);
  long result = -1;
  if (src && packed && back) {
    uint32_t x = seed | 1u;
    size_t i = 0;
    while (i < n) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      const char *w = words[x % 10u];
      size_t wl = strlen(w);
      for (size_t k = 0; k < wl && i < n; ++k) src[i++] = (uint8_t)w[k];
      if ((x >> 20) % 7u == 0 && i < n) src[i++] = (uint8_t)('0' + (x >> 8) % 10u);
    }
    long c = compress_buffer(src, n, packed, n + n / 64 + 16);
    if (c >= 0) {
      long d = decompress_buffer(packed, (size_t)c, back, n);
      if (d == (long)n && memcmp(src, back, n) == 0) result = c;
    }
  }
  free(src);
  free(packed);
  free(back);
  return result;
}
