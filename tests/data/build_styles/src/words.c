#include "common.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }
static int is_vowel(char c) {
  c = lower(c);
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

static uint32_t mix(uint32_t h, uint32_t v) {
  h ^= v;
  h *= 0x01000193u;
  h ^= h >> 13;
  return h;
}

uint32_t words_hash(const char *text) {
  uint32_t h = 0x811c9dc5u;
  for (; *text; ++text)
    h = mix(h, (unsigned char)lower(*text));
  return h;
}

void words_count(const char *text, struct counts *out) {
  int in_word = 0;
  out->words = out->letters = out->digits = out->vowels = 0;
  for (const char *p = text; *p; ++p) {
    out->letters += is_alpha(*p);
    out->digits += is_digit(*p);
    out->vowels += is_vowel(*p);
    if (is_space(*p))
      in_word = 0;
    else if (!in_word)
      in_word = 1, out->words++;
  }
  out->hash = mix(words_hash(text), out->words);
}
