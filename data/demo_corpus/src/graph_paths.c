/* Graph algorithms on CSR graphs: indexed binary heap, Dijkstra, BFS, union-find and Kruskal's MST. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int from, to;
  uint32_t w;
} Edge;

typedef struct {
  int n, m;
  int *offset; /* n + 1 entries */
  int *target;
  uint32_t *weight;
} Csr;

typedef struct {
  int *heap;  /* vertex ids */
  int *where; /* position in heap or -1 */
  uint64_t *key;
  int size;
} IndexedHeap;

typedef struct {
  int *parent;
  int *rank;
  int sets;
} UnionFind;

static uint32_t next_rand(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *s = x;
  return x;
}

static Edge *random_edges(int n, int extra, uint32_t seed, int *m_out) {
  int m = (n - 1) + extra;
  Edge *e = malloc((size_t)(m > 0 ? m : 1) * sizeof(Edge));
  if (!e) return NULL;
  uint32_t s = seed | 1u;
  int k = 0;
  for (int v = 1; v < n; ++v) {
    int parent = (int)(next_rand(&s) % (uint32_t)v);
    e[k++] = (Edge){parent, v, 1 + next_rand(&s) % 100u};
  }
  for (int i = 0; i < extra; ++i) {
    int a = (int)(next_rand(&s) % (uint32_t)n);
    int b = (int)(next_rand(&s) % (uint32_t)n);
    e[k++] = (Edge){a, b, 1 + next_rand(&s) % 1000u};
  }
  *m_out = m;
  return e;
}

/* Builds an undirected CSR graph (each edge stored both ways). */
static int csr_build(Csr *g, int n, const Edge *edges, int m) {
  g->n = n;
  g->m = 2 * m;
  g->offset = calloc((size_t)n + 1, sizeof(int));
  g->target = malloc((size_t)(2 * m + 1) * sizeof(int));
  g->weight = malloc((size_t)(2 * m + 1) * sizeof(uint32_t));
  int *fill = calloc((size_t)n + 1, sizeof(int));
  if (!g->offset || !g->target || !g->weight || !fill) {
    free(fill);
    return 0;
  }
  for (int i = 0; i < m; ++i) {
    g->offset[edges[i].from + 1]++;
    g->offset[edges[i].to + 1]++;
  }
  for (int v = 0; v < n; ++v) g->offset[v + 1] += g->offset[v];
  for (int i = 0; i < m; ++i) {
    int a = edges[i].from, b = edges[i].to;
    int pa = g->offset[a] + fill[a]++, pb = g->offset[b] + fill[b]++;
    g->target[pa] = b;
    g->weight[pa] = edges[i].w;
    g->target[pb] = a;
    g->weight[pb] = edges[i].w;
  }
  free(fill);
  return 1;
}

static void csr_free(Csr *g) {
  free(g->offset);
  free(g->target);
  free(g->weight);
}

static void heap_swap(IndexedHeap *h, int i, int j) {
  int a = h->heap[i], b = h->heap[j];
  h->heap[i] = b;
  h->heap[j] = a;
  h->where[b] = i;
  h->where[a] = j;
}

static void heap_up(IndexedHeap *h, int i) {
  while (i > 0) {
    int p = (i - 1) / 2;
    if (h->key[h->heap[p]] <= h->key[h->heap[i]]) break;
    heap_swap(h, i, p);
    i = p;
  }
}

static void heap_down(IndexedHeap *h, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->size && h->key[h->heap[l]] < h->key[h->heap[m]]) m = l;
    if (r < h->size && h->key[h->heap[r]] < h->key[h->heap[m]]) m = r;
    if (m == i) return;
    heap_swap(h, i, m);
    i = m;
  }
}

static void heap_push_or_decrease(IndexedHeap *h, int v, uint64_t key) {
  if (h->where[v] < 0) {
    h->heap[h->size] = v;
    h->where[v] = h->size++;
  } else if (key >= h->key[v]) {
    return;
  }
  h->key[v] = key;
  heap_up(h, h->where[v]);
}

static int heap_pop_min(IndexedHeap *h) {
  int top = h->heap[0];
  heap_swap(h, 0, --h->size);
  h->where[top] = -1;
  heap_down(h, 0);
  return top;
}

static int dijkstra(const Csr *g, int src, uint64_t *dist) {
  IndexedHeap h;
  h.heap = malloc((size_t)g->n * sizeof(int));
  h.where = malloc((size_t)g->n * sizeof(int));
  h.key = dist;
  h.size = 0;
  if (!h.heap || !h.where) {
    free(h.heap);
    free(h.where);
    return 0;
  }
  for (int v = 0; v < g->n; ++v) {
    dist[v] = UINT64_MAX;
    h.where[v] = -1;
  }
  heap_push_or_decrease(&h, src, 0);
  while (h.size) {
    int u = heap_pop_min(&h);
    for (int e = g->offset[u]; e < g->offset[u + 1]; ++e) {
      int v = g->target[e];
      uint64_t nd = dist[u] + g->weight[e];
      if (nd < dist[v]) heap_push_or_decrease(&h, v, nd);
    }
  }
  free(h.heap);
  free(h.where);
  return 1;
}

static int bfs_levels(const Csr *g, int src, int *level) {
  int *queue = malloc((size_t)g->n * sizeof(int));
  if (!queue) return -1;
  for (int v = 0; v < g->n; ++v) level[v] = -1;
  int head = 0, tail = 0, maxlevel = 0;
  level[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    int u = queue[head++];
    for (int e = g->offset[u]; e < g->offset[u + 1]; ++e) {
      int v = g->target[e];
      if (level[v] >= 0) continue;
      level[v] = level[u] + 1;
      if (level[v] > maxlevel) maxlevel = level[v];
      queue[tail++] = v;
    }
  }
  free(queue);
  return maxlevel;
}

static int uf_init(UnionFind *u, int n) {
  u->parent = malloc((size_t)n * sizeof(int));
  u->rank = calloc((size_t)n, sizeof(int));
  u->sets = n;
  if (!u->parent || !u->rank) return 0;
  for (int i = 0; i < n; ++i) u->parent[i] = i;
  return 1;
}

static int uf_find(UnionFind *u, int x) {
  int root = x;
  while (u->parent[root] != root) root = u->parent[root];
  while (u->parent[x] != root) {
    int next = u->parent[x];
    u->parent[x] = root;
    x = next;
  }
  return root;
}

static int uf_union(UnionFind *u, int a, int b) {
  a = uf_find(u, a);
  b = uf_find(u, b);
  if (a == b) return 0;
  if (u->rank[a] < u->rank[b]) {
    int t = a;
    a = b;
    b = t;
  }
  u->parent[b] = a;
  if (u->rank[a] == u->rank[b]) u->rank[a]++;
  u->sets--;
  return 1;
}

static int edge_cmp(const void *pa, const void *pb) {
  const Edge *a = pa, *b = pb;
  if (a->w != b->w) return a->w < b->w ? -1 : 1;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  return (a->to > b->to) - (a->to < b->to);
}

/* Builds a random connected graph and returns the sum of shortest-path distances from vertex 0
   plus the BFS eccentricity of vertex 0 (in the low byte), or 0 on failure. */
uint64_t graph_dijkstra_digest(int n, int extra, uint32_t seed) {
  if (n < 2 || extra < 0 || n > 1000000) return 0;
  int m;
  Edge *edges = random_edges(n, extra, seed, &m);
  Csr g = {0, 0, NULL, NULL, NULL};
  uint64_t *dist = malloc((size_t)n * sizeof(uint64_t));
  int *level = malloc((size_t)n * sizeof(int));
  uint64_t digest = 0;
  if (edges && dist && level && csr_build(&g, n, edges, m) && dijkstra(&g, 0, dist)) {
    int ecc = bfs_levels(&g, 0, level);
    for (int v = 0; v < n; ++v) digest += dist[v];
    digest = (digest << 8) | (uint64_t)(ecc & 0xff);
  }
  csr_free(&g);
  free(edges);
  free(dist);
  free(level);
  return digest;
}

/* Kruskal's minimum spanning forest over the same kind of random graph; returns its weight and
   the number of components in *components. */
uint64_t graph_mst_weight(int n, int extra, uint32_t seed, int *components) {
  if (n < 2 || extra < 0 || n > 1000000) return 0;
  int m;
  Edge *edges = random_edges(n, extra, seed, &m);
  UnionFind uf = {NULL, NULL, 0};
  uint64_t total = 0;
  if (edges && uf_init(&uf, n)) {
    qsort(edges, (size_t)m, sizeof(Edge), edge_cmp);
    for (int i = 0; i < m && uf.sets > 1; ++i)
      if (uf_union(&uf, edges[i].from, edges[i].to)) total += edges[i].w;
    *components = uf.sets;
  }
  free(uf.parent);
  free(uf.rank);
  free(edges);
  return total;
}
