#include "lib.h"

#include <stdlib.h>
#include <string.h>

struct entry {
  char *key;
  size_t len;
  long value;
  struct entry *next;
};

struct table {
  struct entry **buckets;
  size_t nbuckets, size;
};

static uint32_t hash_key(const char *key, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; ++i) {
    h ^= (unsigned char)key[i];
    h *= 16777619u;
  }
  return h;
}

static struct entry *find(const struct table *t, const char *key, size_t len, uint32_t h) {
  for (struct entry *e = t->buckets[h % t->nbuckets]; e; e = e->next)
    if (e->len == len && memcmp(e->key, key, len) == 0)
      return e;
  return NULL;
}

static int grow(struct table *t) {
  size_t n = t->nbuckets * 2;
  struct entry **b = calloc(n, sizeof *b);
  if (!b)
    return -1;
  for (size_t i = 0; i < t->nbuckets; ++i) {
    struct entry *e = t->buckets[i];
    while (e) {
      struct entry *next = e->next;
      uint32_t h = hash_key(e->key, e->len);
      e->next = b[h % n];
      b[h % n] = e;
      e = next;
    }
  }
  free(t->buckets);
  t->buckets = b;
  t->nbuckets = n;
  return 0;
}

struct table *table_new(size_t buckets) {
  struct table *t = malloc(sizeof *t);
  if (!t)
    return NULL;
  t->nbuckets = buckets ? buckets : 8;
  t->size = 0;
  t->buckets = calloc(t->nbuckets, sizeof *t->buckets);
  if (!t->buckets) {
    free(t);
    return NULL;
  }
  return t;
}

void table_free(struct table *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->nbuckets; ++i) {
    struct entry *e = t->buckets[i];
    while (e) {
      struct entry *next = e->next;
      free(e->key);
      free(e);
      e = next;
    }
  }
  free(t->buckets);
  free(t);
}

int table_add(struct table *t, const char *key, size_t len, long value) {
  uint32_t h = hash_key(key, len);
  struct entry *e = find(t, key, len, h);
  if (e) {
    e->value += value;
    return 0;
  }
  if (t->size + 1 > t->nbuckets * 3 / 4 && grow(t) != 0)
    return -1;
  e = malloc(sizeof *e);
  if (!e)
    return -1;
  e->key = malloc(len + 1);
  if (!e->key) {
    free(e);
    return -1;
  }
  memcpy(e->key, key, len);
  e->key[len] = 0;
  e->len = len;
  e->value = value;
  e->next = t->buckets[h % t->nbuckets];
  t->buckets[h % t->nbuckets] = e;
  t->size++;
  return 1;
}

long table_get(const struct table *t, const char *key, size_t len, int *found) {
  struct entry *e = find(t, key, len, hash_key(key, len));
  if (found)
    *found = e != NULL;
  return e ? e->value : 0;
}

size_t table_size(const struct table *t) { return t->size; }

uint64_t table_digest(const struct table *t) {
  uint64_t d = 0;
  for (size_t i = 0; i < t->nbuckets; ++i)
    for (struct entry *e = t->buckets[i]; e; e = e->next)
      d += (uint64_t)hash_key(e->key, e->len) * (uint64_t)(e->value + 1);
  return d;
}
