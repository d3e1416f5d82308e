/* Growable vectors and a Robin Hood open-addressing hash map from strings to counters. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct {
  char **items;
  size_t len;
  size_t cap;
} StrVec;

typedef struct {
  int64_t *items;
  size_t len;
  size_t cap;
} IntVec;

typedef struct {
  char *key;
  uint64_t hash;
  int64_t value;
  uint32_t dist;
  uint32_t used;
} Slot;

typedef struct {
  Slot *slots;
  size_t cap;
  size_t count;
} HashMap;

static int grow_capacity(size_t *cap, size_t need, size_t elem, void **buf) {
  size_t n = *cap ? *cap : 8;
  while (n < need) n *= 2;
  if (n == *cap) return 1;
  void *p = realloc(*buf, n * elem);
  if (!p) return 0;
  *buf = p;
  *cap = n;
  return 1;
}

static int strvec_push(StrVec *v, const char *s, size_t n) {
  void *buf = v->items;
  if (!grow_capacity(&v->cap, v->len + 1, sizeof(char *), &buf)) return 0;
  v->items = buf;
  char *copy = malloc(n + 1);
  if (!copy) return 0;
  memcpy(copy, s, n);
  copy[n] = '\0';
  v->items[v->len++] = copy;
  return 1;
}

static void strvec_free(StrVec *v) {
  for (size_t i = 0; i < v->len; ++i) free(v->items[i]);
  free(v->items);
  v->items = NULL;
  v->len = v->cap = 0;
}

static int intvec_push(IntVec *v, int64_t x) {
  void *buf = v->items;
  if (!grow_capacity(&v->cap, v->len + 1, sizeof(int64_t), &buf)) return 0;
  v->items = buf;
  v->items[v->len++] = x;
  return 1;
}

static void intvec_free(IntVec *v) {
  free(v->items);
  v->items = NULL;
  v->len = v->cap = 0;
}

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint64_t a = (uint8_t)s[i], b = (uint8_t)s[i + 1];
    uint64_t c = (uint8_t)s[i + 2], d = (uint8_t)s[i + 3];
    h = (h ^ a) * 0x100000001b3ull;
    h = (h ^ b) * 0x100000001b3ull;
    h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ d) * 0x100000001b3ull;
  }
  for (; i < n; ++i) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h;
}

static int map_init(HashMap *m, size_t cap) {
  size_t n = 16;
  while (n < cap) n *= 2;
  m->slots = calloc(n, sizeof(Slot));
  m->cap = m->slots ? n : 0;
  m->count = 0;
  return m->slots != NULL;
}

static void map_free(HashMap *m) {
  for (size_t i = 0; i < m->cap; ++i)
    if (m->slots[i].used) free(m->slots[i].key);
  free(m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}

/* Places an owned key; returns the slot index that ends up holding it. */
static size_t map_place(HashMap *m, Slot incoming) {
  size_t mask = m->cap - 1;
  size_t idx = (size_t)incoming.hash & mask;
  size_t landed = (size_t)-1;
  incoming.dist = 0;
  incoming.used = 1;
  for (;;) {
    Slot *s = &m->slots[idx];
    if (!s->used) {
      *s = incoming;
      return landed == (size_t)-1 ? idx : landed;
    }
    if (s->dist < incoming.dist) {
      Slot tmp = *s;
      *s = incoming;
      incoming = tmp;
      if (landed == (size_t)-1) landed = idx;
    }
    idx = (idx + 1) & mask;
    incoming.dist++;
  }
}

static int map_rehash(HashMap *m, size_t newcap) {
  HashMap fresh;
  if (!map_init(&fresh, newcap)) return 0;
  for (size_t i = 0; i < m->cap; ++i)
    if (m->slots[i].used) map_place(&fresh, m->slots[i]);
  free(m->slots);
  *m = fresh;
  m->count = 0;
  for (size_t i = 0; i < m->cap; ++i) m->count += m->slots[i].used;
  return 1;
}

static Slot *map_find(const HashMap *m, const char *key, size_t n, uint64_t h) {
  size_t mask = m->cap - 1;
  size_t idx = (size_t)h & mask;
  uint32_t dist = 0;
  for (;;) {
    Slot *s = &m->slots[idx];
    if (!s->used || s->dist < dist) return NULL;
    if (s->hash == h && strncmp(s->key, key, n) == 0 && s->key[n] == '\0') return s;
    idx = (idx + 1) & mask;
    dist++;
  }
}

static Slot *map_upsert(HashMap *m, const char *key, size_t n) {
  uint64_t h = hash_bytes(key, n);
  Slot *s = map_find(m, key, n, h);
  if (s) return s;
  if ((m->count + 1) * 4 > m->cap * 3 && !map_rehash(m, m->cap * 2)) return NULL;
  char *copy = malloc(n + 1);
  if (!copy) return NULL;
  memcpy(copy, key, n);
  copy[n] = '\0';
  Slot fresh = {copy, h, 0, 0, 1};
  size_t at = map_place(m, fresh);
  m->count++;
  return &m->slots[at];
}

static int map_remove(HashMap *m, const char *key, size_t n) {
  Slot *s = map_find(m, key, n, hash_bytes(key, n));
  if (!s) return 0;
  size_t mask = m->cap - 1;
  size_t idx = (size_t)(s - m->slots);
  free(s->key);
  for (;;) {
    size_t next = (idx + 1) & mask;
    Slot *ns = &m->slots[next];
    if (!ns->used || ns->dist == 0) {
      memset(&m->slots[idx], 0, sizeof(Slot));
      break;
    }
    m->slots[idx] = *ns;
    m->slots[idx].dist--;
    idx = next;
  }
  m->count--;
  return 1;
}

static int is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t tokenize_words(const char *text, StrVec *out) {
  size_t i = 0, added = 0;
  while (text[i]) {
    while (text[i] && !is_word_char(text[i])) ++i;
    size_t start = i;
    while (text[i] && is_word_char(text[i])) ++i;
    if (i > start && strvec_push(out, text + start, i - start)) ++added;
  }
  return added;
}

static int compare_counts(const Slot *a, const Slot *b) {
  if (a->value != b->value) return a->value > b->value ? -1 : 1;
  return strcmp(a->key, b->key);
}

static void insertion_sort_slots(Slot **arr, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    Slot *x = arr[i];
    size_t j = i;
    while (j > 0 && compare_counts(arr[j - 1], x) > 0) {
      arr[j] = arr[j - 1];
      --j;
    }
    arr[j] = x;
  }
}

/* Counts words in text and writes the top_k most frequent as "word=count;" into out.
   Returns the number of distinct words, or -1 on allocation failure. */
long vh_word_histogram(const char *text, size_t top_k, char *out, size_t outlen) {
  StrVec words = {0};
  HashMap map;
  if (!map_init(&map, 64)) return -1;
  tokenize_words(text, &words);
  for (size_t i = 0; i < words.len; ++i) {
    Slot *s = map_upsert(&map, words.items[i], strlen(words.items[i]));
    if (!s) {
      strvec_free(&words);
      map_free(&map);
      return -1;
    }
    s->value++;
  }
  Slot **order = malloc((map.count + 1) * sizeof(Slot *));
  size_t n = 0;
  if (order) {
    for (size_t i = 0; i < map.cap; ++i)
      if (map.slots[i].used) order[n++] = &map.slots[i];
    insertion_sort_slots(order, n);
  }
  size_t pos = 0;
  if (outlen) out[0] = '\0';
  for (size_t i = 0; order && i < n && i < top_k && pos < outlen; ++i) {
    int w = snprintf(out + pos, outlen - pos, "%s=%lld;", order[i]->key, (long long)order[i]->value);
    if (w < 0) break;
    pos += (size_t)w;
  }
  long distinct = (long)map.count;
  free(order);
  strvec_free(&words);
  map_free(&map);
  return distinct;
}

/* Simulates a churn workload: inserts, bumps and removes generated keys.
   Returns a checksum over the surviving entries. */
uint64_t vh_churn(uint32_t seed, size_t rounds) {
  HashMap map;
  IntVec log = {0};
  if (!map_init(&map, 16)) return 0;
  char key[32];
  uint32_t x = seed ? seed : 1u;
  for (size_t r = 0; r < rounds; ++r) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    int n = snprintf(key, sizeof key, "k%u", x % 997u);
    if (n <= 0) continue;
    if ((x & 7u) == 0) {
      intvec_push(&log, map_remove(&map, key, (size_t)n) ? 1 : 0);
    } else {
      Slot *s = map_upsert(&map, key, (size_t)n);
      if (s) s->value += (int64_t)(x & 0xffu);
      intvec_push(&log, s ? s->value : -1);
    }
  }
  uint64_t sum = map.count;
  for (size_t i = 0; i < map.cap; ++i)
    if (map.slots[i].used) sum += map.slots[i].hash ^ (uint64_t)map.slots[i].value;
  for (size_t i = 0; i < log.len; ++i) sum = sum * 31u + (uint64_t)log.items[i];
  intvec_free(&log);
  map_free(&map);
  return sum;
}
