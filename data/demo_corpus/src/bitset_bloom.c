/* Dynamic bitsets (set algebra, popcount, rank/select) and a Bloom filter with double hashing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef struct {
  uint64_t *words;
  size_t nbits;
  size_t nwords;
} Bitset;

typedef struct {
  Bitset bits;
  unsigned hashes;
  size_t inserted;
} Bloom;

static int bs_init(Bitset *b, size_t nbits) {
  b->nbits = nbits;
  b->nwords = (nbits + 63) / 64;
  b->words = calloc(b->nwords ? b->nwords : 1, sizeof(uint64_t));
  return b->words != NULL;
}

static void bs_free(Bitset *b) {
  free(b->words);
  b->words = NULL;
}

static void bs_set(Bitset *b, size_t i) { b->words[i / 64] |= 1ull << (i % 64); }

static void bs_clear(Bitset *b, size_t i) { b->words[i / 64] &= ~(1ull << (i % 64)); }

static int bs_test(const Bitset *b, size_t i) { return (int)((b->words[i / 64] >> (i % 64)) & 1u); }

static unsigned popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

static size_t bs_count(const Bitset *b) {
  size_t c = 0, i = 0;
  for (; i + 4 <= b->nwords; i += 4)
    c += popcount64(b->words[i]) + popcount64(b->words[i + 1]) + popcount64(b->words[i + 2]) +
         popcount64(b->words[i + 3]);
  for (; i < b->nwords; ++i) c += popcount64(b->words[i]);
  return c;
}

/* dst = a OP b for op in {and, or, xor, andnot}; all three must have the same size. */
static void bs_combine(Bitset *dst, const Bitset *a, const Bitset *b, int op) {
  for (size_t i = 0; i < dst->nwords; ++i) {
    uint64_t x = a->words[i], y = b->words[i];
    switch (op) {
      case 0: dst->words[i] = x & y; break;
      case 1: dst->words[i] = x | y; break;
      case 2: dst->words[i] = x ^ y; break;
      default: dst->words[i] = x & ~y; break;
    }
  }
}

/* Number of set bits strictly below position i. */
static size_t bs_rank(const Bitset *b, size_t i) {
  size_t r = 0, w = i / 64;
  for (size_t k = 0; k < w; ++k) r += popcount64(b->words[k]);
  if (i % 64) r += popcount64(b->words[w] & ((1ull << (i % 64)) - 1));
  return r;
}

/* Position of the k-th set bit (0-based), or nbits if there are fewer. */
static size_t bs_select(const Bitset *b, size_t k) {
  for (size_t w = 0; w < b->nwords; ++w) {
    unsigned c = popcount64(b->words[w]);
    if (k < c) {
      uint64_t x = b->words[w];
      for (size_t j = 0; j < k; ++j) x &= x - 1;
      size_t bit = 0;
      while (!((x >> bit) & 1u)) ++bit;
      return w * 64 + bit;
    }
    k -= c;
  }
  return b->nbits;
}

static size_t bs_next_set(const Bitset *b, size_t from) {
  while (from < b->nbits) {
    uint64_t w = b->words[from / 64] >> (from % 64);
    if (w) {
      size_t step = 0;
      while (!((w >> step) & 1u)) ++step;
      return from + step;
    }
    from = (from / 64 + 1) * 64;
  }
  return b->nbits;
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static uint64_t hash_key(const void *key, size_t n, uint64_t seed) {
  const uint8_t *p = key;
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    for (int k = 7; k >= 0; --k) w = (w << 8) | p[i + (size_t)k];
    h = mix64(h ^ w) + 0x9e3779b97f4a7c15ull;
  }
  uint64_t tail = 0;
  for (size_t k = n; k > i; --k) tail = (tail << 8) | p[k - 1];
  return mix64(h ^ tail);
}

static int bloom_init(Bloom *f, size_t expected, double fp_rate) {
  double m = -(double)expected * log(fp_rate) / (log(2.0) * log(2.0));
  size_t bits = m < 64 ? 64 : (size_t)m;
  unsigned k = (unsigned)(0.5 + (double)bits / (double)(expected ? expected : 1) * log(2.0));
  f->hashes = k < 1 ? 1 : k > 16 ? 16 : k;
  f->inserted = 0;
  return bs_init(&f->bits, bits);
}

static void bloom_add(Bloom *f, const void *key, size_t n) {
  uint64_t h1 = hash_key(key, n, 0x1234), h2 = hash_key(key, n, 0x9876) | 1u;
  for (unsigned i = 0; i < f->hashes; ++i) bs_set(&f->bits, (size_t)((h1 + i * h2) % f->bits.nbits));
  f->inserted++;
}

static int bloom_maybe_contains(const Bloom *f, const void *key, size_t n) {
  uint64_t h1 = hash_key(key, n, 0x1234), h2 = hash_key(key, n, 0x9876) | 1u;
  for (unsigned i = 0; i < f->hashes; ++i)
    if (!bs_test(&f->bits, (size_t)((h1 + i * h2) % f->bits.nbits))) return 0;
  return 1;
}

/* Inserts n keys and probes n others; returns the measured false-positive rate, or -1 if a
   false negative (a bug) or allocation failure happens. */
double bloom_false_positive_rate(size_t n, double target) {
  Bloom f;
  if (n == 0 || target <= 0 || target >= 1 || !bloom_init(&f, n, target)) return -1;
  double rate = 0;
  size_t fp = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = mix64(i * 2 + 1);
    bloom_add(&f, &key, sizeof key);
  }
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = mix64(i * 2 + 1);
    if (!bloom_maybe_contains(&f, &key, sizeof key)) {
      bs_free(&f.bits);
      return -1;
    }
    uint64_t other = mix64(i * 2 + 2);
    fp += (size_t)bloom_maybe_contains(&f, &other, sizeof other);
  }
  rate = (double)fp / (double)n;
  bs_free(&f.bits);
  return rate;
}

/* Sieve of Eratosthenes on a bitset, then set algebra against "numbers = 1 mod 4" and a
   rank/select consistency walk. Returns the count of primes = 1 mod 4 below limit, -1 on error. */
long bitset_prime_stats(size_t limit) {
  Bitset composite, mod4, both, primes;
  if (limit < 2 || limit > (1u << 26)) return -1;
  int ok = bs_init(&composite, limit) & bs_init(&mod4, limit) & bs_init(&both, limit) & bs_init(&primes, limit);
  long result = -1;
  if (ok) {
    bs_set(&composite, 0);
    bs_set(&composite, 1);
    for (size_t i = 2; i * i < limit; ++i)
      if (!bs_test(&composite, i))
        for (size_t j = i * i; j < limit; j += i) bs_set(&composite, j);
    for (size_t i = 0; i < limit; ++i) {
      if (i % 4 == 1) bs_set(&mod4, i);
      bs_set(&primes, i);
    }
    if (limit % 64) primes.words[primes.nwords - 1] &= (1ull << (limit % 64)) - 1;
    bs_combine(&primes, &primes, &composite, 3);
    bs_combine(&both, &primes, &mod4, 0);
    result = (long)bs_count(&both);
    size_t k = 0;
    for (size_t p = bs_next_set(&primes, 0); p < limit; p = bs_next_set(&primes, p + 1), ++k)
      if (bs_rank(&primes, p) != k || bs_select(&primes, k) != p) {
        result = -1;
        break;
      }
    bs_clear(&both, 5);
    bs_combine(&mod4, &mod4, &both, 2);
  }
  bs_free(&composite);
  bs_free(&mod4);
  bs_free(&both);
  bs_free(&primes);
  return result;
}
