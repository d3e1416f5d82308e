/* Red-black tree keyed by 64-bit integers, with ordered iteration, range queries and validation. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

enum { RED = 0, BLACK = 1 };

typedef struct RbNode {
  struct RbNode *left, *right, *parent;
  int64_t key;
  int64_t value;
  int color;
} RbNode;

typedef struct {
  RbNode *root;
  size_t size;
} RbTree;

static RbNode *node_new(int64_t key, int64_t value, RbNode *parent) {
  RbNode *n = malloc(sizeof *n);
  if (!n) return NULL;
  n->left = n->right = NULL;
  n->parent = parent;
  n->key = key;
  n->value = value;
  n->color = RED;
  return n;
}

static int color_of(const RbNode *n) { return n ? n->color : BLACK; }

static void set_child(RbTree *t, RbNode *parent, RbNode *old, RbNode *fresh) {
  if (!parent)
    t->root = fresh;
  else if (parent->left == old)
    parent->left = fresh;
  else
    parent->right = fresh;
  if (fresh) fresh->parent = parent;
}

static void rotate_left(RbTree *t, RbNode *x) {
  RbNode *y = x->right;
  x->right = y->left;
  if (y->left) y->left->parent = x;
  set_child(t, x->parent, x, y);
  y->left = x;
  x->parent = y;
}

static void rotate_right(RbTree *t, RbNode *x) {
  RbNode *y = x->left;
  x->left = y->right;
  if (y->right) y->right->parent = x;
  set_child(t, x->parent, x, y);
  y->right = x;
  x->parent = y;
}

static void fix_insert(RbTree *t, RbNode *z) {
  while (z->parent && z->parent->color == RED) {
    RbNode *p = z->parent;
    RbNode *g = p->parent;
    if (!g) break;
    if (p == g->left) {
      RbNode *u = g->right;
      if (color_of(u) == RED) {
        p->color = BLACK;
        u->color = BLACK;
        g->color = RED;
        z = g;
        continue;
      }
      if (z == p->right) {
        z = p;
        rotate_left(t, z);
        p = z->parent;
      }
      p->color = BLACK;
      g->color = RED;
      rotate_right(t, g);
    } else {
      RbNode *u = g->left;
      if (color_of(u) == RED) {
        p->color = BLACK;
        u->color = BLACK;
        g->color = RED;
        z = g;
        continue;
      }
      if (z == p->left) {
        z = p;
        rotate_right(t, z);
        p = z->parent;
      }
      p->color = BLACK;
      g->color = RED;
      rotate_left(t, g);
    }
  }
  t->root->color = BLACK;
}

static RbNode *find_node(const RbTree *t, int64_t key) {
  RbNode *n = t->root;
  while (n && n->key != key) n = key < n->key ? n->left : n->right;
  return n;
}

static int tree_insert(RbTree *t, int64_t key, int64_t value) {
  RbNode *parent = NULL, **link = &t->root;
  while (*link) {
    parent = *link;
    if (key == parent->key) {
      parent->value = value;
      return 1;
    }
    link = key < parent->key ? &parent->left : &parent->right;
  }
  RbNode *n = node_new(key, value, parent);
  if (!n) return 0;
  *link = n;
  t->size++;
  fix_insert(t, n);
  return 1;
}

static RbNode *minimum(RbNode *n) {
  while (n && n->left) n = n->left;
  return n;
}

static RbNode *successor(RbNode *n) {
  if (n->right) return minimum(n->right);
  RbNode *p = n->parent;
  while (p && n == p->right) {
    n = p;
    p = p->parent;
  }
  return p;
}

static void fix_delete(RbTree *t, RbNode *x, RbNode *parent) {
  while (x != t->root && color_of(x) == BLACK) {
    if (x == parent->left) {
      RbNode *w = parent->right;
      if (color_of(w) == RED) {
        w->color = BLACK;
        parent->color = RED;
        rotate_left(t, parent);
        w = parent->right;
      }
      if (color_of(w->left) == BLACK && color_of(w->right) == BLACK) {
        w->color = RED;
        x = parent;
        parent = x->parent;
      } else {
        if (color_of(w->right) == BLACK) {
          w->left->color = BLACK;
          w->color = RED;
          rotate_right(t, w);
          w = parent->right;
        }
        w->color = parent->color;
        parent->color = BLACK;
        if (w->right) w->right->color = BLACK;
        rotate_left(t, parent);
        x = t->root;
        parent = NULL;
      }
    } else {
      RbNode *w = parent->left;
      if (color_of(w) == RED) {
        w->color = BLACK;
        parent->color = RED;
        rotate_right(t, parent);
        w = parent->left;
      }
      if (color_of(w->right) == BLACK && color_of(w->left) == BLACK) {
        w->color = RED;
        x = parent;
        parent = x->parent;
      } else {
        if (color_of(w->left) == BLACK) {
          w->right->color = BLACK;
          w->color = RED;
          rotate_left(t, w);
          w = parent->left;
        }
        w->color = parent->color;
        parent->color = BLACK;
        if (w->left) w->left->color = BLACK;
        rotate_right(t, parent);
        x = t->root;
        parent = NULL;
      }
    }
  }
  if (x) x->color = BLACK;
}

static int tree_erase(RbTree *t, int64_t key) {
  RbNode *z = find_node(t, key);
  if (!z) return 0;
  RbNode *y = z, *x, *xparent;
  int ycolor = y->color;
  if (!z->left) {
    x = z->right;
    xparent = z->parent;
    set_child(t, z->parent, z, z->right);
  } else if (!z->right) {
    x = z->left;
    xparent = z->parent;
    set_child(t, z->parent, z, z->left);
  } else {
    y = minimum(z->right);
    ycolor = y->color;
    x = y->right;
    if (y->parent == z) {
      xparent = y;
    } else {
      xparent = y->parent;
      set_child(t, y->parent, y, y->right);
      y->right = z->right;
      y->right->parent = y;
    }
    set_child(t, z->parent, z, y);
    y->left = z->left;
    y->left->parent = y;
    y->color = z->color;
  }
  free(z);
  t->size--;
  if (ycolor == BLACK) fix_delete(t, x, xparent);
  return 1;
}

static int black_height(const RbNode *n, int *ok) {
  if (!n) return 1;
  if (n->color == RED && (color_of(n->left) == RED || color_of(n->right) == RED)) *ok = 0;
  if (n->left && n->left->key >= n->key) *ok = 0;
  if (n->right && n->right->key <= n->key) *ok = 0;
  int l = black_height(n->left, ok);
  int r = black_height(n->right, ok);
  if (l != r) *ok = 0;
  return l + (n->color == BLACK);
}

static void destroy(RbNode *n) {
  while (n) {
    destroy(n->left);
    RbNode *r = n->right;
    free(n);
    n = r;
  }
}

static int64_t range_sum(const RbTree *t, int64_t lo, int64_t hi, size_t *count) {
  RbNode *n = t->root, *start = NULL;
  while (n) {
    if (n->key >= lo) {
      start = n;
      n = n->left;
    } else {
      n = n->right;
    }
  }
  int64_t sum = 0;
  for (n = start; n && n->key <= hi; n = successor(n)) {
    sum += n->value % 1000003;
    ++*count;
  }
  return sum;
}

/* Runs a deterministic insert/erase/query workload and returns a digest; a negative
   result means the red-black invariants were violated or memory ran out. */
int64_t rb_workload(uint64_t seed, int ops) {
  RbTree t = {NULL, 0};
  uint64_t s = seed | 1u;
  int64_t digest = 0;
  for (int i = 0; i < ops; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int64_t key = (int64_t)((s >> 33) % 5000u);
    unsigned kind = (unsigned)(s >> 60);
    if (kind < 9) {
      if (!tree_insert(&t, key, (int64_t)(s >> 40))) {
        destroy(t.root);
        return -2;
      }
    } else if (kind < 13) {
      digest += tree_erase(&t, key);
    } else {
      size_t cnt = 0;
      digest += range_sum(&t, key, key + 64, &cnt);
      digest += (int64_t)cnt;
    }
    digest %= 1000000007;
  }
  int ok = 1;
  black_height(t.root, &ok);
  digest = digest * 31 + (int64_t)t.size;
  destroy(t.root);
  return ok ? digest : -1;
}

/* Sorts values by inserting them into a tree and reading them back in order;
   duplicates collapse. Returns the number of distinct values written. */
size_t rb_sort_unique(const int64_t *in, size_t n, int64_t *out) {
  RbTree t = {NULL, 0};
  for (size_t i = 0; i < n; ++i)
    if (!tree_insert(&t, in[i], (int64_t)i)) break;
  size_t k = 0;
  for (RbNode *it = minimum(t.root); it; it = successor(it)) out[k++] = it->key;
  destroy(t.root);
  return k;
}

/* Looks up each key after building the tree from pairs; returns matches found. */
size_t rb_lookup_many(const int64_t *keys, const int64_t *vals, size_t n, const int64_t *queries,
                      size_t q, int64_t *results) {
  RbTree t = {NULL, 0};
  for (size_t i = 0; i < n; ++i) tree_insert(&t, keys[i], vals[i]);
  size_t found = 0;
  for (size_t i = 0; i < q; ++i) {
    RbNode *hit = find_node(&t, queries[i]);
    results[i] = hit ? hit->value : -1;
    found += hit != NULL;
  }
  destroy(t.root);
  return found;
}
