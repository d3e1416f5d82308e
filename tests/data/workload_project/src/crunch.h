#ifndef CRUNCH_H
#define CRUNCH_H
#include <stdint.h>
#include <stddef.h>

/* Mixes n words of data into a 256-bit state with many values live at once. */
uint64_t mix(const uint64_t *data, size_t n, uint64_t seed);
/* A 12-tap integer filter over n samples into out; returns a checksum. */
int64_t filter(const int32_t *in, int32_t *out, size_t n, const int32_t *taps);

/* Scans n words, nearly all of them through a branch hinted as rare. */
uint64_t scan(const uint64_t *data, size_t n, uint64_t seed);

#endif
