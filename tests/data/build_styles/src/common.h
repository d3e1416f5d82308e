#ifndef BUILD_STYLES_COMMON_H
#define BUILD_STYLES_COMMON_H

#include <stddef.h>
#include <stdint.h>

struct counts {
  unsigned words, letters, digits, vowels;
  uint32_t hash;
};

extern int scale; /* geom.c: -fPIC reaches it through the GOT */

long geom_area(const int *sides, size_t n);
long geom_perimeter(const int *sides, size_t n);
long geom_score(const int *sides, size_t n);
void words_count(const char *text, struct counts *out);
uint32_t words_hash(const char *text);

static inline int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

#endif
