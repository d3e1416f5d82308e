#include "lib.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static char lower(char c) { return is_upper(c) ? (char)(c - 'A' + 'a') : c; }
static int is_vowel(char c) {
  c = lower(c);
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

static uint32_t mix(uint32_t h, uint32_t v) {
  h ^= v;
  h *= 0x01000193u;
  h ^= h >> 15;
  return h;
}

uint32_t text_hash(const char *text, size_t n) {
  uint32_t h = 0x811c9dc5u;
  for (size_t i = 0; i < n; ++i)
    h = mix(h, (unsigned char)lower(text[i]));
  return h;
}

void text_scan(const char *text, size_t n, struct text_stats *out) {
  int in_word = 0;
  out->lines = out->words = out->chars = out->digits = out->upper = out->vowels = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    out->chars++;
    if (c == '\n')
      out->lines++;
    if (is_digit(c))
      out->digits++;
    if (is_upper(c))
      out->upper++;
    if (is_vowel(c))
      out->vowels++;
    if (is_space(c)) {
      in_word = 0;
    } else if (!in_word) {
      in_word = 1;
      out->words++;
    }
  }
  out->hash = text_hash(text, n);
}

size_t text_tokens(const char *text, size_t n, const char **starts, size_t *lens, size_t max) {
  size_t count = 0, i = 0;
  while (i < n && count < max) {
    while (i < n && is_space(text[i]))
      ++i;
    size_t begin = i;
    while (i < n && !is_space(text[i]))
      ++i;
    if (i > begin) {
      starts[count] = text + begin;
      lens[count] = i - begin;
      ++count;
    }
  }
  return count;
}
