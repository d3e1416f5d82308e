#ifndef LAUNCH_PROJECT_LIB_H
#define LAUNCH_PROJECT_LIB_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* text.c */
struct text_stats {
  size_t lines, words, chars, digits, upper, vowels;
  uint32_t hash;
};
void text_scan(const char *text, size_t n, struct text_stats *out);
uint32_t text_hash(const char *text, size_t n);
size_t text_tokens(const char *text, size_t n, const char **starts, size_t *lens, size_t max);

/* table.c */
struct table;
struct table *table_new(size_t buckets);
void table_free(struct table *t);
int table_add(struct table *t, const char *key, size_t len, long value);
long table_get(const struct table *t, const char *key, size_t len, int *found);
size_t table_size(const struct table *t);
uint64_t table_digest(const struct table *t);

/* matrix.c */
void mat_mul(const double *a, const double *b, double *c, int n);
double mat_trace(const double *a, int n);
void mat_fill(double *a, int n, uint32_t seed);
double mat_checksum(const double *a, int n);

#ifdef __cplusplus
}
#endif
#endif
