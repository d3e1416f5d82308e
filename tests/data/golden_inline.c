/* Small call graph for the protocol golden test: the inliner is asked about
 * every call site of the static helpers. */
static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static int square(int x) { return x * x; }
static int weigh(const int *a, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += clamp(square(a[i]), -1000, 1000) + a[i] * 3;
  return s;
}
static int twice(const int *a, int n) { return weigh(a, n) + weigh(a + 1, n - 1); }

int score_table(const int *a, int n) { return twice(a, n) - clamp(n, 0, 64); }
int score_pairs(const int *a, const int *b, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += clamp(a[i] - b[i], -5, 5) * square(b[i]);
  return s + weigh(b, n);
}
