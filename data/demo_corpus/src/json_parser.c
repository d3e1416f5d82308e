/* JSON tokenizer and recursive-descent parser into a flat node pool, with a path query. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JKind;

typedef struct {
  JKind kind;
  int parent;
  int first_child;
  int next_sibling;
  int key_off, key_len; /* member name inside the source, for object members */
  int str_off, str_len; /* raw string body inside the source */
  double num;
  int boolean;
} JNode;

typedef struct {
  const char *src;
  size_t len;
  size_t pos;
  JNode *nodes;
  int count;
  int cap;
  int depth;
  const char *error;
} JParser;

static void set_error(JParser *p, const char *msg) {
  if (!p->error) p->error = msg;
}

static void skip_ws(JParser *p) {
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->pos++;
  }
}

static int peek(JParser *p) {
  skip_ws(p);
  return p->pos < p->len ? (unsigned char)p->src[p->pos] : -1;
}

static int expect(JParser *p, char c) {
  if (peek(p) != (unsigned char)c) {
    set_error(p, "unexpected character");
    return 0;
  }
  p->pos++;
  return 1;
}

static int new_node(JParser *p, JKind kind, int parent) {
  if (p->count == p->cap) {
    int cap = p->cap ? p->cap * 2 : 32;
    JNode *n = realloc(p->nodes, (size_t)cap * sizeof(JNode));
    if (!n) {
      set_error(p, "out of memory");
      return -1;
    }
    p->nodes = n;
    p->cap = cap;
  }
  JNode *n = &p->nodes[p->count];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->parent = parent;
  n->first_child = n->next_sibling = -1;
  n->key_off = -1;
  return p->count++;
}

static void append_child(JParser *p, int parent, int child, int *last) {
  if (parent < 0) return;
  if (*last < 0)
    p->nodes[parent].first_child = child;
  else
    p->nodes[*last].next_sibling = child;
  *last = child;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Scans a string literal starting at the opening quote; reports its raw body. */
static int scan_string(JParser *p, int *off, int *len) {
  if (!expect(p, '"')) return 0;
  size_t start = p->pos;
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    if (c == '"') {
      *off = (int)start;
      *len = (int)(p->pos - start);
      p->pos++;
      return 1;
    }
    if ((unsigned char)c < 0x20) break;
    if (c == '\\') {
      if (p->pos + 1 >= p->len) break;
      char e = p->src[p->pos + 1];
      if (e == 'u') {
        if (p->pos + 5 >= p->len) break;
        for (int i = 2; i < 6; ++i)
          if (hex_value(p->src[p->pos + (size_t)i]) < 0) {
            set_error(p, "bad unicode escape");
            return 0;
          }
        p->pos += 6;
        continue;
      }
      if (!strchr("\"\\/bfnrt", e)) break;
      p->pos += 2;
      continue;
    }
    p->pos++;
  }
  set_error(p, "bad string");
  return 0;
}

static int scan_number(JParser *p, double *out) {
  size_t i = p->pos;
  double sign = 1.0, mant = 0.0;
  int exp10 = 0, digits = 0;
  if (i < p->len && p->src[i] == '-') {
    sign = -1.0;
    ++i;
  }
  while (i < p->len && p->src[i] >= '0' && p->src[i] <= '9') {
    mant = mant * 10.0 + (p->src[i++] - '0');
    ++digits;
  }
  if (i < p->len && p->src[i] == '.') {
    ++i;
    while (i < p->len && p->src[i] >= '0' && p->src[i] <= '9') {
      mant = mant * 10.0 + (p->src[i++] - '0');
      --exp10;
      ++digits;
    }
  }
  if (!digits) {
    set_error(p, "bad number");
    return 0;
  }
  if (i < p->len && (p->src[i] == 'e' || p->src[i] == 'E')) {
    int esign = 1, e = 0;
    ++i;
    if (i < p->len && (p->src[i] == '+' || p->src[i] == '-')) esign = p->src[i++] == '-' ? -1 : 1;
    while (i < p->len && p->src[i] >= '0' && p->src[i] <= '9') {
      if (e < 10000) e = e * 10 + (p->src[i] - '0');
      ++i;
    }
    exp10 += esign * e;
  }
  double scale = 1.0;
  int ae = exp10 < 0 ? -exp10 : exp10;
  for (int k = 0; k < ae && k < 400; ++k) scale *= 10.0;
  *out = sign * (exp10 < 0 ? mant / scale : mant * scale);
  p->pos = i;
  return 1;
}

static int match_word(JParser *p, const char *w) {
  size_t n = strlen(w);
  if (p->pos + n > p->len || memcmp(p->src + p->pos, w, n) != 0) {
    set_error(p, "bad literal");
    return 0;
  }
  p->pos += n;
  return 1;
}

static int parse_value(JParser *p, int parent);

static int parse_array(JParser *p, int self) {
  int last = -1;
  p->pos++;
  if (peek(p) == ']') {
    p->pos++;
    return 1;
  }
  for (;;) {
    int child = parse_value(p, self);
    if (child < 0) return 0;
    append_child(p, self, child, &last);
    int c = peek(p);
    if (c == ',') {
      p->pos++;
      continue;
    }
    return expect(p, ']');
  }
}

static int parse_object(JParser *p, int self) {
  int last = -1;
  p->pos++;
  if (peek(p) == '}') {
    p->pos++;
    return 1;
  }
  for (;;) {
    int koff = 0, klen = 0;
    if (!scan_string(p, &koff, &klen) || !expect(p, ':')) return 0;
    int child = parse_value(p, self);
    if (child < 0) return 0;
    p->nodes[child].key_off = koff;
    p->nodes[child].key_len = klen;
    append_child(p, self, child, &last);
    int c = peek(p);
    if (c == ',') {
      p->pos++;
      continue;
    }
    return expect(p, '}');
  }
}

static int parse_value(JParser *p, int parent) {
  int c = peek(p);
  int id;
  if (++p->depth > 64) {
    set_error(p, "nesting too deep");
    return -1;
  }
  switch (c) {
    case '{':
      id = new_node(p, J_OBJ, parent);
      if (id < 0 || !parse_object(p, id)) id = -1;
      break;
    case '[':
      id = new_node(p, J_ARR, parent);
      if (id < 0 || !parse_array(p, id)) id = -1;
      break;
    case '"': {
      int off = 0, len = 0;
      id = -1;
      if (scan_string(p, &off, &len)) {
        id = new_node(p, J_STR, parent);
        if (id >= 0) {
          p->nodes[id].str_off = off;
          p->nodes[id].str_len = len;
        }
      }
      break;
    }
    case 't':
    case 'f':
      id = match_word(p, c == 't' ? "true" : "false") ? new_node(p, J_BOOL, parent) : -1;
      if (id >= 0) p->nodes[id].boolean = c == 't';
      break;
    case 'n':
      id = match_word(p, "null") ? new_node(p, J_NULL, parent) : -1;
      break;
    default: {
      double v = 0;
      id = scan_number(p, &v) ? new_node(p, J_NUM, parent) : -1;
      if (id >= 0) p->nodes[id].num = v;
      break;
    }
  }
  p->depth--;
  return id;
}

static int key_equals(const JParser *p, const JNode *n, const char *key, size_t klen) {
  return n->key_off >= 0 && (size_t)n->key_len == klen &&
         memcmp(p->src + n->key_off, key, klen) == 0;
}

/* Walks a dotted path such as "a.b.3.c" (numbers index arrays). */
static int lookup_path(const JParser *p, const char *path) {
  int cur = 0;
  while (*path && cur >= 0) {
    const char *dot = strchr(path, '.');
    size_t seg = dot ? (size_t)(dot - path) : strlen(path);
    int child = p->nodes[cur].first_child, found = -1;
    if (p->nodes[cur].kind == J_ARR) {
      long idx = strtol(path, NULL, 10);
      for (long i = 0; child >= 0; child = p->nodes[child].next_sibling, ++i)
        if (i == idx) {
          found = child;
          break;
        }
    } else {
      for (; child >= 0; child = p->nodes[child].next_sibling)
        if (key_equals(p, &p->nodes[child], path, seg)) {
          found = child;
          break;
        }
    }
    cur = found;
    path += seg;
    if (*path == '.') ++path;
  }
  return cur;
}

static double subtree_sum(const JParser *p, int id) {
  const JNode *n = &p->nodes[id];
  if (n->kind == J_NUM) return n->num;
  if (n->kind == J_BOOL) return n->boolean;
  if (n->kind == J_STR) return n->str_len;
  double s = 0;
  for (int c = n->first_child; c >= 0; c = p->nodes[c].next_sibling) s += subtree_sum(p, c);
  return s;
}

/* Parses a JSON document; on success stores the number of nodes in *node_count and returns
   the numeric sum of the value at the dotted path (0 if absent). Returns -1.0 on errors
   and sets *error to a static message. */
double json_query_sum(const char *text, const char *path, int *node_count, const char **error) {
  JParser p = {text, strlen(text), 0, NULL, 0, 0, 0, NULL};
  int root = parse_value(&p, -1);
  if (root >= 0 && peek(&p) != -1) set_error(&p, "trailing characters");
  double result = -1.0;
  if (!p.error) {
    int at = lookup_path(&p, path);
    result = at >= 0 ? subtree_sum(&p, at) : 0.0;
  }
  *node_count = p.count;
  *error = p.error;
  free(p.nodes);
  return result;
}

/* Validates a document; returns the maximum nesting depth or -1 if malformed. */
int json_max_depth(const char *text) {
  JParser p = {text, strlen(text), 0, NULL, 0, 0, 0, NULL};
  int root = parse_value(&p, -1);
  if (root >= 0 && peek(&p) != -1) set_error(&p, "trailing characters");
  int best = -1;
  if (!p.error) {
    for (int i = 0; i < p.count; ++i) {
      int d = 0;
      for (int a = p.nodes[i].parent; a >= 0; a = p.nodes[a].parent) ++d;
      if (d > best) best = d;
    }
  }
  free(p.nodes);
  return best;
}
