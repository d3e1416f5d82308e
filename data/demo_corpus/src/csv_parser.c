/* RFC-4180-style CSV parser with quoted fields, typed column statistics and a group-by summary. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>

#define CSV_MAX_COLS 16
#define CSV_FIELD_MAX 128

typedef struct {
  const char *src;
  size_t len;
  size_t pos;
  char sep;
  int line;
} CsvReader;

typedef struct {
  char text[CSV_FIELD_MAX];
  size_t len;
  int quoted;
} CsvField;

typedef struct {
  long count;
  long numeric;
  double sum;
  double sum_sq;
  double min;
  double max;
  size_t longest;
} ColumnStats;

static int at_end(const CsvReader *r) { return r->pos >= r->len; }

static char cur(const CsvReader *r) { return r->pos < r->len ? r->src[r->pos] : '\0'; }

static void field_put(CsvField *f, char c) {
  if (f->len + 1 < CSV_FIELD_MAX) f->text[f->len++] = c;
  f->text[f->len] = '\0';
}

static void field_reset(CsvField *f) {
  f->len = 0;
  f->quoted = 0;
  f->text[0] = '\0';
}

/* Reads one field; returns 1 if more fields follow on this record, 0 at end of record. */
static int read_field(CsvReader *r, CsvField *f) {
  field_reset(f);
  if (cur(r) == '"') {
    f->quoted = 1;
    r->pos++;
    while (!at_end(r)) {
      char c = cur(r);
      r->pos++;
      if (c == '"') {
        if (cur(r) == '"') {
          field_put(f, '"');
          r->pos++;
          continue;
        }
        break;
      }
      if (c == '\n') r->line++;
      field_put(f, c);
    }
  }
  while (!at_end(r)) {
    char c = cur(r);
    if (c == r->sep) {
      r->pos++;
      return 1;
    }
    if (c == '\r' || c == '\n') {
      if (c == '\r' && r->pos + 1 < r->len && r->src[r->pos + 1] == '\n') r->pos++;
      r->pos++;
      r->line++;
      return 0;
    }
    if (!f->quoted) field_put(f, c);
    r->pos++;
  }
  return 0;
}

static int read_record(CsvReader *r, CsvField *fields, int max) {
  int n = 0;
  for (;;) {
    CsvField scratch;
    CsvField *f = n < max ? &fields[n] : &scratch;
    int more = read_field(r, f);
    ++n;
    if (!more) break;
  }
  return n < max ? n : max;
}

static void trim_field(CsvField *f) {
  size_t a = 0, b = f->len;
  while (a < b && (f->text[a] == ' ' || f->text[a] == '\t')) ++a;
  while (b > a && (f->text[b - 1] == ' ' || f->text[b - 1] == '\t')) --b;
  if (a) memmove(f->text, f->text + a, b - a);
  f->len = b - a;
  f->text[f->len] = '\0';
}

static int parse_double(const char *s, double *out) {
  char *end = NULL;
  if (!*s) return 0;
  double v = strtod(s, &end);
  if (end == s) return 0;
  while (*end == ' ') ++end;
  if (*end) return 0;
  if (!isfinite(v)) return 0;
  *out = v;
  return 1;
}

static void stats_init(ColumnStats *s) {
  memset(s, 0, sizeof *s);
  s->min = INFINITY;
  s->max = -INFINITY;
}

static void stats_add(ColumnStats *s, const CsvField *f) {
  double v;
  s->count++;
  if (f->len > s->longest) s->longest = f->len;
  if (!f->quoted && parse_double(f->text, &v)) {
    s->numeric++;
    s->sum += v;
    s->sum_sq += v * v;
    if (v < s->min) s->min = v;
    if (v > s->max) s->max = v;
  }
}

static double stats_mean(const ColumnStats *s) { return s->numeric ? s->sum / (double)s->numeric : 0.0; }

static double stats_stddev(const ColumnStats *s) {
  if (s->numeric < 2) return 0.0;
  double m = stats_mean(s);
  double var = s->sum_sq / (double)s->numeric - m * m;
  return var > 0 ? sqrt(var) : 0.0;
}

/* Parses CSV text with a header row and writes per-column "name:mean/stddev/min/max" lines into
   out. Returns the number of data records, or -1 when the header is missing. */
long csv_summarize(const char *text, char sep, char *out, size_t outlen) {
  CsvReader r = {text, strlen(text), 0, sep, 1};
  CsvField header[CSV_MAX_COLS], row[CSV_MAX_COLS];
  ColumnStats stats[CSV_MAX_COLS];
  if (at_end(&r)) return -1;
  int ncols = read_record(&r, header, CSV_MAX_COLS);
  for (int i = 0; i < ncols; ++i) {
    trim_field(&header[i]);
    stats_init(&stats[i]);
  }
  long records = 0;
  while (!at_end(&r)) {
    int n = read_record(&r, row, CSV_MAX_COLS);
    if (n == 1 && row[0].len == 0 && !row[0].quoted) continue;
    for (int i = 0; i < n && i < ncols; ++i) {
      trim_field(&row[i]);
      stats_add(&stats[i], &row[i]);
    }
    ++records;
  }
  size_t pos = 0;
  if (outlen) out[0] = '\0';
  for (int i = 0; i < ncols && pos < outlen; ++i) {
    const ColumnStats *s = &stats[i];
    int w;
    if (s->numeric)
      w = snprintf(out + pos, outlen - pos, "%s:%.3f/%.3f/%.3f/%.3f\n", header[i].text, stats_mean(s),
                   stats_stddev(s), s->min, s->max);
    else
      w = snprintf(out + pos, outlen - pos, "%s:text(%zu)\n", header[i].text, s->longest);
    if (w < 0) break;
    pos += (size_t)w;
  }
  return records;
}

typedef struct {
  char key[CSV_FIELD_MAX];
  double total;
  long rows;
} Group;

static int find_group(Group *groups, int n, const char *key) {
  for (int i = 0; i < n; ++i)
    if (strcmp(groups[i].key, key) == 0) return i;
  return -1;
}

static void sort_groups(Group *g, int n) {
  for (int i = 1; i < n; ++i) {
    Group tmp = g[i];
    int j = i - 1;
    while (j >= 0 && (g[j].total < tmp.total || (g[j].total == tmp.total && strcmp(g[j].key, tmp.key) > 0))) {
      g[j + 1] = g[j];
      --j;
    }
    g[j + 1] = tmp;
  }
}

/* Sums column value_col grouped by column key_col (0-based, header skipped). Writes at most
   max_groups "key=total" lines ordered by total. Returns the number of distinct groups. */
int csv_group_sum(const char *text, char sep, int key_col, int value_col, int max_groups, char *out,
                  size_t outlen) {
  if (key_col < 0 || value_col < 0 || key_col >= CSV_MAX_COLS || value_col >= CSV_MAX_COLS) return -1;
  CsvReader r = {text, strlen(text), 0, sep, 1};
  CsvField row[CSV_MAX_COLS];
  Group *groups = NULL;
  int ngroups = 0, cap = 0;
  if (!at_end(&r)) read_record(&r, row, CSV_MAX_COLS);
  while (!at_end(&r)) {
    int n = read_record(&r, row, CSV_MAX_COLS);
    if (key_col >= n || value_col >= n) continue;
    trim_field(&row[key_col]);
    trim_field(&row[value_col]);
    double v;
    if (!parse_double(row[value_col].text, &v)) continue;
    int g = find_group(groups, ngroups, row[key_col].text);
    if (g < 0) {
      if (ngroups == cap) {
        int ncap = cap ? cap * 2 : 8;
        Group *ng = realloc(groups, (size_t)ncap * sizeof(Group));
        if (!ng) break;
        groups = ng;
        cap = ncap;
      }
      g = ngroups++;
      memcpy(groups[g].key, row[key_col].text, row[key_col].len + 1);
      groups[g].total = 0;
      groups[g].rows = 0;
    }
    groups[g].total += v;
    groups[g].rows++;
  }
  sort_groups(groups, ngroups);
  size_t pos = 0;
  if (outlen) out[0] = '\0';
  for (int i = 0; i < ngroups && i < max_groups && pos < outlen; ++i) {
    int w = snprintf(out + pos, outlen - pos, "%s=%.2f(%ld)\n", groups[i].key, groups[i].total, groups[i].rows);
    if (w < 0) break;
    pos += (size_t)w;
  }
  free(groups);
  return ngroups;
}
