/* crunch ROUNDS: mixes and filters generated data ROUNDS times; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#include "crunch.h"

#define WORDS 4096

int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 10;
  static uint64_t data[WORDS];
  static int32_t in[WORDS], out[WORDS];
  static const int32_t taps[12] = {3, -5, 7, 11, -13, 17, 19, -23, 29, 31, -37, 41};
  uint64_t x = 88172645463325252ull, check = 0;
  for (int i = 0; i < WORDS; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    data[i] = x;
    in[i] = (int32_t)(x >> 40) - (1 << 23);
  }
  for (long r = 0; r < rounds; ++r) {
    check ^= mix(data, WORDS, check + (uint64_t)r);
    check += (uint64_t)filter(in, out, WORDS, taps);
    check ^= scan(data, WORDS, check);
    in[r % WORDS] ^= (int32_t)check;
  }
  printf("%016llx\n", (unsigned long long)check);
  return 0;
}
