/* String utilities: split, trim, ASCII case folding, UTF-8 decoding/encoding, edit distance, word wrap. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *ptr;
  size_t len;
} Slice;

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static unsigned char fold_ascii(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }

static Slice trim(Slice s) {
  while (s.len && is_space((unsigned char)s.ptr[0])) {
    s.ptr++;
    s.len--;
  }
  while (s.len && is_space((unsigned char)s.ptr[s.len - 1])) s.len--;
  return s;
}

static size_t split(Slice s, char sep, Slice *out, size_t max) {
  size_t n = 0, start = 0;
  for (size_t i = 0; i <= s.len; ++i) {
    if (i == s.len || s.ptr[i] == sep) {
      if (n < max) {
        out[n].ptr = s.ptr + start;
        out[n].len = i - start;
      }
      ++n;
      start = i + 1;
    }
  }
  return n < max ? n : max;
}

static int slice_equal_fold(Slice a, Slice b) {
  if (a.len != b.len) return 0;
  for (size_t i = 0; i < a.len; ++i)
    if (fold_ascii((unsigned char)a.ptr[i]) != fold_ascii((unsigned char)b.ptr[i])) return 0;
  return 1;
}

/* Decodes one UTF-8 sequence; returns its length (>=1) and stores the code point, or U+FFFD on
   malformed input (overlong forms, surrogates, out-of-range values, truncated sequences). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned char c = s[0];
  size_t need;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    need = 2;
    v = c & 0x1fu;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    need = 3;
    v = c & 0x0fu;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    need = 4;
    v = c & 0x07u;
    min = 0x10000;
  } else {
    *cp = 0xfffd;
    return 1;
  }
  if (need > n) {
    *cp = 0xfffd;
    return 1;
  }
  for (size_t i = 1; i < need; ++i) {
    if ((s[i] & 0xc0) != 0x80) {
      *cp = 0xfffd;
      return i;
    }
    v = (v << 6) | (s[i] & 0x3fu);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) v = 0xfffd;
  *cp = v;
  return need;
}

static size_t utf8_encode(uint32_t cp, unsigned char *out) {
  if (cp < 0x80) {
    out[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (unsigned char)(0xc0 | (cp >> 6));
    out[1] = (unsigned char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (unsigned char)(0xe0 | (cp >> 12));
    out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (unsigned char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (unsigned char)(0xf0 | (cp >> 18));
  out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (unsigned char)(0x80 | (cp & 0x3f));
  return 4;
}

/* Simple case folding for Latin-1 Supplement, Greek and Cyrillic capitals. */
static uint32_t fold_codepoint(uint32_t cp) {
  if (cp < 0x80) return fold_ascii((unsigned char)cp);
  if (cp >= 0xc0 && cp <= 0xde && cp != 0xd7) return cp + 0x20;
  if (cp >= 0x391 && cp <= 0x3a9 && cp != 0x3a2) return cp + 0x20;
  if (cp >= 0x410 && cp <= 0x42f) return cp + 0x20;
  if (cp >= 0x400 && cp <= 0x40f) return cp + 0x50;
  return cp;
}

static size_t levenshtein(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, size_t *row) {
  for (size_t j = 0; j <= nb; ++j) row[j] = j;
  for (size_t i = 1; i <= na; ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= nb; ++j) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

static size_t decode_all(const char *s, uint32_t *out, size_t max) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s), i = 0, k = 0;
  while (i < n && k < max) {
    uint32_t cp;
    i += utf8_decode(p + i, n - i, &cp);
    out[k++] = cp;
  }
  return k;
}

/* Case-folds UTF-8 text into out (NUL-terminated); returns bytes written or 0 if it does not fit. */
size_t su_casefold(const char *in, char *out, size_t outlen) {
  const unsigned char *p = (const unsigned char *)in;
  size_t n = strlen(in), i = 0, o = 0;
  while (i < n) {
    uint32_t cp;
    i += utf8_decode(p + i, n - i, &cp);
    unsigned char buf[4];
    size_t w = utf8_encode(fold_codepoint(cp), buf);
    if (o + w + 1 > outlen) return 0;
    memcpy(out + o, buf, w);
    o += w;
  }
  if (o + 1 > outlen) return 0;
  out[o] = '\0';
  return o;
}

/* Case-insensitive edit distance between two UTF-8 strings of up to 255 code points each. */
long su_edit_distance(const char *a, const char *b) {
  uint32_t ca[256], cb[256];
  size_t row[257];
  size_t na = decode_all(a, ca, 256), nb = decode_all(b, cb, 256);
  for (size_t i = 0; i < na; ++i) ca[i] = fold_codepoint(ca[i]);
  for (size_t i = 0; i < nb; ++i) cb[i] = fold_codepoint(cb[i]);
  return (long)levenshtein(ca, na, cb, nb, row);
}

/* Splits "k1=v1; k2 = v2;..." and returns the trimmed value for key (case-insensitive) in out. */
int su_lookup_setting(const char *text, const char *key, char *out, size_t outlen) {
  Slice parts[32], kv[2];
  Slice whole = {text, strlen(text)};
  Slice want = {key, strlen(key)};
  size_t n = split(whole, ';', parts, 32);
  for (size_t i = 0; i < n; ++i) {
    if (split(trim(parts[i]), '=', kv, 2) != 2) continue;
    if (!slice_equal_fold(trim(kv[0]), want)) continue;
    Slice v = trim(kv[1]);
    if (v.len + 1 > outlen) return -1;
    memcpy(out, v.ptr, v.len);
    out[v.len] = '\0';
    return (int)v.len;
  }
  return 0;
}

/* Greedy word wrap to width columns (counting code points); returns number of lines. */
int su_word_wrap(const char *text, size_t width, char *out, size_t outlen) {
  Slice words[512];
  Slice whole = trim((Slice){text, strlen(text)});
  size_t nw = 0, start = 0;
  for (size_t i = 0; i <= whole.len && nw < 512; ++i) {
    if (i == whole.len || is_space((unsigned char)whole.ptr[i])) {
      if (i > start) {
        words[nw].ptr = whole.ptr + start;
        words[nw++].len = i - start;
      }
      start = i + 1;
    }
  }
  size_t o = 0, col = 0;
  int lines = nw ? 1 : 0;
  for (size_t i = 0; i < nw; ++i) {
    uint32_t tmp[64];
    char wbuf[256];
    size_t wl = words[i].len < sizeof wbuf - 1 ? words[i].len : sizeof wbuf - 1;
    memcpy(wbuf, words[i].ptr, wl);
    wbuf[wl] = '\0';
    size_t cps = decode_all(wbuf, tmp, 64);
    if (col && col + 1 + cps > width) {
      if (o + 1 >= outlen) return -1;
      out[o++] = '\n';
      col = 0;
      ++lines;
    } else if (col) {
      if (o + 1 >= outlen) return -1;
      out[o++] = ' ';
      ++col;
    }
    if (o + wl >= outlen) return -1;
    memcpy(out + o, wbuf, wl);
    o += wl;
    col += cps;
  }
  if (o >= outlen) return -1;
  out[o] = '\0';
  return lines;
}
