/* Memory allocators: chunked bump arena with marks, size-class pools, and a first-fit heap with coalescing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
  struct Chunk *next;
  size_t size;
  size_t used;
  max_align_t data[]; /* flexible array keeps payload aligned */
} Chunk;

typedef struct {
  Chunk *head;
  size_t chunk_size;
  size_t total;
} Arena;

typedef struct {
  Chunk *chunk;
  size_t used;
} ArenaMark;

typedef struct FreeNode {
  struct FreeNode *next;
} FreeNode;

#define POOL_CLASSES 6
typedef struct {
  Arena *arena;
  FreeNode *free_list[POOL_CLASSES];
  size_t live[POOL_CLASSES];
} Pools;

/* First-fit heap: blocks carry a size header whose low bit marks "in use". */
#define HEAP_BYTES 65536
typedef struct {
  size_t words[HEAP_BYTES / sizeof(size_t)];
} FitHeap;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static Chunk *chunk_new(size_t payload) {
  Chunk *c = malloc(sizeof(Chunk) + payload);
  if (!c) return NULL;
  c->next = NULL;
  c->size = payload;
  c->used = 0;
  return c;
}

static void arena_init(Arena *a, size_t chunk_size) {
  a->head = NULL;
  a->chunk_size = chunk_size;
  a->total = 0;
}

static void *arena_alloc(Arena *a, size_t n, size_t align) {
  if (align == 0 || (align & (align - 1)) || align > sizeof(max_align_t)) return NULL;
  Chunk *c = a->head;
  if (c) {
    size_t off = align_up(c->used, align);
    if (off + n <= c->size) {
      c->used = off + n;
      a->total += n;
      return (char *)c->data + off;
    }
  }
  size_t payload = n > a->chunk_size ? align_up(n, 64) : a->chunk_size;
  Chunk *fresh = chunk_new(payload);
  if (!fresh) return NULL;
  fresh->next = c;
  a->head = fresh;
  fresh->used = n;
  a->total += n;
  return fresh->data;
}

static ArenaMark arena_mark(const Arena *a) {
  ArenaMark m = {a->head, a->head ? a->head->used : 0};
  return m;
}

static void arena_release(Arena *a, ArenaMark m) {
  while (a->head && a->head != m.chunk) {
    Chunk *next = a->head->next;
    free(a->head);
    a->head = next;
  }
  if (a->head) a->head->used = m.used;
}

static void arena_destroy(Arena *a) {
  ArenaMark empty = {NULL, 0};
  arena_release(a, empty);
}

static int size_class(size_t n) {
  size_t cls = 16;
  for (int i = 0; i < POOL_CLASSES; ++i, cls *= 2)
    if (n <= cls) return i;
  return -1;
}

static void *pool_alloc(Pools *p, size_t n) {
  int c = size_class(n);
  if (c < 0) return arena_alloc(p->arena, n, 16);
  p->live[c]++;
  FreeNode *f = p->free_list[c];
  if (f) {
    p->free_list[c] = f->next;
    return f;
  }
  return arena_alloc(p->arena, (size_t)16 << c, 16);
}

static void pool_free(Pools *p, void *ptr, size_t n) {
  int c = size_class(n);
  if (c < 0 || !ptr) return;
  FreeNode *f = ptr;
  f->next = p->free_list[c];
  p->free_list[c] = f;
  p->live[c]--;
}

static size_t block_size(size_t header) { return header & ~(size_t)1; }

static void heap_init(FitHeap *h) {
  memset(h, 0, sizeof *h);
  h->words[0] = sizeof h->words; /* one free block spanning everything */
}

static size_t heap_index(const FitHeap *h, size_t byte_off) {
  (void)h;
  return byte_off / sizeof(size_t);
}

/* Returns a byte offset of the payload or (size_t)-1. */
static size_t heap_alloc(FitHeap *h, size_t n) {
  size_t need = align_up(n + sizeof(size_t), 2 * sizeof(size_t));
  size_t off = 0;
  while (off < sizeof h->words) {
    size_t hdr = h->words[heap_index(h, off)];
    size_t sz = block_size(hdr);
    if (!(hdr & 1u) && sz >= need) {
      if (sz - need >= 2 * sizeof(size_t)) {
        h->words[heap_index(h, off + need)] = sz - need;
        sz = need;
      }
      h->words[heap_index(h, off)] = sz | 1u;
      return off + sizeof(size_t);
    }
    off += sz;
  }
  return (size_t)-1;
}

/* Frees and coalesces with the following free blocks; a full pass merges predecessors. */
static void heap_free(FitHeap *h, size_t payload_off) {
  size_t off = payload_off - sizeof(size_t);
  size_t *hdr = &h->words[heap_index(h, off)];
  *hdr = block_size(*hdr);
  size_t next = off + *hdr;
  while (next < sizeof h->words && !(h->words[heap_index(h, next)] & 1u)) {
    *hdr += h->words[heap_index(h, next)];
    next = off + *hdr;
  }
}

static size_t heap_largest_free(FitHeap *h) {
  size_t off = 0, best = 0;
  while (off < sizeof h->words) {
    size_t *hdr = &h->words[heap_index(h, off)];
    if (!(*hdr & 1u)) {
      size_t next = off + *hdr;
      while (next < sizeof h->words && !(h->words[heap_index(h, next)] & 1u)) {
        *hdr += h->words[heap_index(h, next)];
        next = off + *hdr;
      }
      if (*hdr > best) best = *hdr;
    }
    off += block_size(*hdr);
  }
  return best;
}

/* Builds linked lists of records in an arena through size-class pools, frees every third one,
   rolls back to a mark, and returns a digest of surviving data mixed with arena usage. */
uint64_t arena_pool_workload(uint32_t seed, int rounds) {
  Arena arena;
  Pools pools;
  arena_init(&arena, 4096);
  memset(&pools, 0, sizeof pools);
  pools.arena = &arena;
  uint64_t digest = 0;
  uint32_t x = seed | 1u;
  for (int r = 0; r < rounds; ++r) {
    ArenaMark mark = arena_mark(&arena);
    void *held[64];
    size_t sizes[64];
    for (int i = 0; i < 64; ++i) {
      x = x * 1664525u + 1013904223u;
      sizes[i] = 1 + (x >> 24) % 700u;
      held[i] = pool_alloc(&pools, sizes[i]);
      if (held[i]) memset(held[i], (int)(x & 0xffu), sizes[i]);
    }
    for (int i = 0; i < 64; ++i)
      if (held[i]) {
        digest = digest * 131u + ((const uint8_t *)held[i])[sizes[i] - 1];
        if (i % 3 == 0) pool_free(&pools, held[i], sizes[i]);
      }
    digest ^= arena.total;
    if (r % 4 == 3) {
      arena_release(&arena, mark);
      memset(pools.free_list, 0, sizeof pools.free_list);
    }
  }
  for (int c = 0; c < POOL_CLASSES; ++c) digest += pools.live[c];
  arena_destroy(&arena);
  return digest;
}

/* Random alloc/free traffic on the first-fit heap; returns the largest free block at the end
   (all blocks freed, so it should be the whole heap) or 0 if an allocation unexpectedly failed. */
size_t fit_heap_workload(uint32_t seed, int ops) {
  FitHeap *h = malloc(sizeof *h);
  if (!h) return 0;
  heap_init(h);
  size_t live[128];
  int nlive = 0;
  uint32_t x = seed | 1u;
  size_t result = 1;
  for (int i = 0; i < ops; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    if (nlive < 128 && (x & 3u) != 0) {
      size_t off = heap_alloc(h, 8 + (x >> 8) % 300u);
      if (off == (size_t)-1) {
        heap_largest_free(h);
        continue;
      }
      ((unsigned char *)h->words)[off] = (unsigned char)i;
      live[nlive++] = off;
    } else if (nlive > 0) {
      int k = (int)((x >> 4) % (uint32_t)nlive);
      heap_free(h, live[k]);
      live[k] = live[--nlive];
    }
  }
  while (nlive > 0) heap_free(h, live[--nlive]);
  result = heap_largest_free(h);
  free(h);
  return result == sizeof h->words ? result : 0;
}
