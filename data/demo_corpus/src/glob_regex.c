/* Glob matcher and a compiled backtracking regular-expression engine (classes, quantifiers, anchors). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum { R_CHAR, R_ANY, R_CLASS, R_BOL, R_EOL } RType;
typedef enum { Q_ONE, Q_STAR, Q_PLUS, Q_OPT } RQuant;

typedef struct {
  RType type;
  RQuant quant;
  unsigned char ch;
  int negated;
  uint32_t bits[8]; /* 256-bit membership set for R_CLASS */
} RAtom;

typedef struct {
  RAtom atoms[64];
  int count;
  int anchored;
} Regex;

static void set_bit(uint32_t *bits, unsigned c) { bits[c >> 5] |= 1u << (c & 31); }

static int test_bit(const uint32_t *bits, unsigned c) { return (bits[c >> 5] >> (c & 31)) & 1u; }

static void set_range(uint32_t *bits, unsigned lo, unsigned hi) {
  for (unsigned c = lo; c <= hi; ++c) set_bit(bits, c);
}

static void add_escape_class(uint32_t *bits, char e) {
  switch (e) {
    case 'd': set_range(bits, '0', '9'); break;
    case 'w':
      set_range(bits, 'a', 'z');
      set_range(bits, 'A', 'Z');
      set_range(bits, '0', '9');
      set_bit(bits, '_');
      break;
    case 's':
      set_bit(bits, ' ');
      set_bit(bits, '\t');
      set_bit(bits, '\n');
      set_bit(bits, '\r');
      break;
    default: set_bit(bits, (unsigned char)e); break;
  }
}

/* Parses a bracket expression starting after '['; returns chars consumed or -1. */
static int parse_class(const char *p, RAtom *atom) {
  int i = 0;
  memset(atom->bits, 0, sizeof atom->bits);
  atom->type = R_CLASS;
  atom->negated = 0;
  if (p[i] == '^') {
    atom->negated = 1;
    ++i;
  }
  int first = 1;
  while (p[i] && (p[i] != ']' || first)) {
    first = 0;
    unsigned char lo = (unsigned char)p[i];
    if (lo == '\\' && p[i + 1]) {
      add_escape_class(atom->bits, p[i + 1]);
      i += 2;
      continue;
    }
    if (p[i + 1] == '-' && p[i + 2] && p[i + 2] != ']') {
      unsigned char hi = (unsigned char)p[i + 2];
      if (hi < lo) return -1;
      set_range(atom->bits, lo, hi);
      i += 3;
    } else {
      set_bit(atom->bits, lo);
      ++i;
    }
  }
  return p[i] == ']' ? i + 1 : -1;
}

static int regex_compile(Regex *re, const char *pat) {
  re->count = 0;
  re->anchored = 0;
  if (*pat == '^') {
    re->anchored = 1;
    ++pat;
  }
  while (*pat) {
    if (re->count >= 64) return 0;
    RAtom *a = &re->atoms[re->count];
    a->quant = Q_ONE;
    a->negated = 0;
    if (*pat == '.') {
      a->type = R_ANY;
      ++pat;
    } else if (*pat == '$' && pat[1] == '\0') {
      a->type = R_EOL;
      ++pat;
    } else if (*pat == '[') {
      int used = parse_class(pat + 1, a);
      if (used < 0) return 0;
      pat += 1 + used;
    } else if (*pat == '\\' && pat[1]) {
      if (pat[1] == 'd' || pat[1] == 'w' || pat[1] == 's') {
        memset(a->bits, 0, sizeof a->bits);
        a->type = R_CLASS;
        add_escape_class(a->bits, pat[1]);
      } else {
        a->type = R_CHAR;
        a->ch = (unsigned char)pat[1];
      }
      pat += 2;
    } else {
      a->type = R_CHAR;
      a->ch = (unsigned char)*pat++;
    }
    if (*pat == '*' || *pat == '+' || *pat == '?') {
      if (a->type == R_EOL) return 0;
      a->quant = *pat == '*' ? Q_STAR : *pat == '+' ? Q_PLUS : Q_OPT;
      ++pat;
    }
    re->count++;
  }
  return 1;
}

static int atom_accepts(const RAtom *a, unsigned char c) {
  switch (a->type) {
    case R_CHAR: return c == a->ch;
    case R_ANY: return c != '\n';
    case R_CLASS: return test_bit(a->bits, c) != a->negated;
    default: return 0;
  }
}

/* Returns the end offset of a match of atoms[i..] at text+pos, or -1. Greedy with backtracking. */
static int match_here(const Regex *re, int i, const char *text, int pos, int len, int *budget) {
  if (--*budget < 0) return -1;
  if (i == re->count) return pos;
  const RAtom *a = &re->atoms[i];
  if (a->type == R_EOL) return pos == len ? match_here(re, i + 1, text, pos, len, budget) : -1;
  if (a->quant == Q_ONE) {
    if (pos < len && atom_accepts(a, (unsigned char)text[pos]))
      return match_here(re, i + 1, text, pos + 1, len, budget);
    return -1;
  }
  int max = 0;
  while (pos + max < len && atom_accepts(a, (unsigned char)text[pos + max])) {
    ++max;
    if (a->quant == Q_OPT) break;
  }
  int min = a->quant == Q_PLUS ? 1 : 0;
  for (int k = max; k >= min; --k) {
    int end = match_here(re, i + 1, text, pos + k, len, budget);
    if (end >= 0) return end;
  }
  return -1;
}

static int regex_search(const Regex *re, const char *text, int len, int *start) {
  int budget = 200000;
  for (int s = 0; s <= len; ++s) {
    int end = match_here(re, 0, text, s, len, &budget);
    if (end >= 0) {
      *start = s;
      return end;
    }
    if (re->anchored || budget < 0) break;
  }
  return -1;
}

static int glob_class(const char **pp, unsigned char c) {
  const char *p = *pp;
  int neg = 0, hit = 0;
  if (*p == '!' || *p == '^') {
    neg = 1;
    ++p;
  }
  int first = 1;
  while (*p && (*p != ']' || first)) {
    first = 0;
    unsigned char lo = (unsigned char)*p;
    if (p[1] == '-' && p[2] && p[2] != ']') {
      if (c >= lo && c <= (unsigned char)p[2]) hit = 1;
      p += 3;
    } else {
      if (c == lo) hit = 1;
      ++p;
    }
  }
  if (*p != ']') return -1;
  *pp = p + 1;
  return hit != neg;
}

/* Iterative glob with a single backtrack point for the most recent '*'. */
static int glob_match(const char *pat, const char *str) {
  const char *star_p = NULL, *star_s = NULL;
  while (*str) {
    if (*pat == '*') {
      star_p = ++pat;
      star_s = str;
      continue;
    }
    int ok;
    const char *next = pat + 1;
    if (*pat == '?') {
      ok = 1;
    } else if (*pat == '[') {
      const char *q = pat + 1;
      int r = glob_class(&q, (unsigned char)*str);
      if (r < 0) return 0;
      ok = r;
      next = q;
    } else if (*pat == '\\' && pat[1]) {
      ok = pat[1] == *str;
      next = pat + 2;
    } else {
      ok = *pat && *pat == *str;
    }
    if (ok) {
      pat = next;
      ++str;
    } else if (star_p) {
      pat = star_p;
      str = ++star_s;
    } else {
      return 0;
    }
  }
  while (*pat == '*') ++pat;
  return *pat == '\0';
}

/* Counts lines of text (separated by '\n') that contain a match of pattern; stores the total
   matched length in *span. Returns -1 if the pattern does not compile. */
int rx_count_matching_lines(const char *pattern, const char *text, long *span) {
  Regex re;
  if (!regex_compile(&re, pattern)) return -1;
  int lines = 0;
  *span = 0;
  while (*text) {
    const char *eol = strchr(text, '\n');
    int len = eol ? (int)(eol - text) : (int)strlen(text);
    int start = 0;
    int end = regex_search(&re, text, len, &start);
    if (end >= 0) {
      ++lines;
      *span += end - start;
    }
    text += len;
    if (*text == '\n') ++text;
  }
  return lines;
}

/* Returns the start offset of the first match in text, or -1 (also -2 for a bad pattern). */
int rx_find(const char *pattern, const char *text, int *match_len) {
  Regex re;
  if (!regex_compile(&re, pattern)) return -2;
  int start = 0;
  int end = regex_search(&re, text, (int)strlen(text), &start);
  *match_len = end >= 0 ? end - start : 0;
  return end >= 0 ? start : -1;
}

/* Filters names by a glob, writing a bitmask of matches (first 64 names). Returns match count. */
int glob_filter(const char *pattern, const char *const *names, int n, uint64_t *mask) {
  int hits = 0;
  *mask = 0;
  for (int i = 0; i < n; ++i) {
    if (glob_match(pattern, names[i])) {
      ++hits;
      if (i < 64) *mask |= 1ull << i;
    }
  }
  return hits;
}
