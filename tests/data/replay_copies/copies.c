/* Call sites the inline-replay writer keys from their copies (tests/python/test_replay_copies.py).
 * hash4's call in probe and in look is copied into every function they are inlined into:
 * one innermost location, one inlined-at chain per copy, so the copies can be answered
 * differently. look reads only, so two copies of its call on one argument are merged into
 * one when neither is inlined: the second "no" leaves no call in the final IR. */
#include <stddef.h>

static unsigned hash4(const unsigned char *p) {
  unsigned v = (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 |
               (unsigned)p[3] << 24;
  return v * 2654435761u >> 20;
}

static unsigned probe(const unsigned char *p, unsigned *table) {
  unsigned h = hash4(p);
  unsigned old = table[h];
  table[h] = old + p[1] + 1u;
  return old;
}

static unsigned look(const unsigned char *p, const unsigned *table) {
  return table[hash4(p)];
}

unsigned scan(const unsigned char *p, size_t n, unsigned *table) {
  unsigned acc = 0;
  for (size_t i = 0; i + 4 <= n; i += 4)
    acc += probe(p + i, table);
  acc ^= probe(p, table);
  acc += probe(p + 1, table) * 3u;
  return acc;
}

unsigned twice(const unsigned char *p, const unsigned *table) {
  return look(p, table) * 5u + look(p, table);
}
