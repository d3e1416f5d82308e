#include "lib.h"

#include <stdio.h>
#include <string.h>

static const char kText[] =
    "The quick brown fox jumps over the lazy dog 42 times.\n"
    "Pack my box with five dozen liquor jugs, said Alice in 1865.\n"
    "How vexingly quick daft zebras jump! The dog sleeps; the fox runs.\n";

static long word_score(const char *w, size_t len) {
  long s = 0;
  for (size_t i = 0; i < len; ++i)
    s = s * 3 + (unsigned char)w[i];
  return s % 1009;
}

int main(void) {
  struct text_stats st;
  text_scan(kText, strlen(kText), &st);
  const char *starts[64];
  size_t lens[64];
  size_t n = text_tokens(kText, strlen(kText), starts, lens, 64);
  struct table *t = table_new(4);
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < n; ++i)
      table_add(t, starts[i], lens[i], word_score(starts[i], lens[i]) + round);
  enum { N = 24 };
  static double a[N * N], b[N * N], c[N * N];
  mat_fill(a, N, 7);
  mat_fill(b, N, 11);
  mat_mul(a, b, c, N);
  printf("lines %zu words %zu chars %zu digits %zu upper %zu vowels %zu hash %08x\n", st.lines,
         st.words, st.chars, st.digits, st.upper, st.vowels, (unsigned)st.hash);
  printf("tokens %zu distinct %zu digest %llu\n", n, table_size(t),
         (unsigned long long)table_digest(t));
  printf("trace %.6f checksum %.6f\n", mat_trace(c, N), mat_checksum(c, N));
  table_free(t);
  return 0;
}
