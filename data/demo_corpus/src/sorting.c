/* Sorting algorithms on integer keys: introsort (quick+heap+insertion), merge sort, LSD radix sort, checks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*Cmp)(int64_t, int64_t);

static int cmp_asc(int64_t a, int64_t b) { return a < b; }

static int cmp_desc(int64_t a, int64_t b) { return a > b; }

static int cmp_abs(int64_t a, int64_t b) {
  uint64_t ua = a < 0 ? 0u - (uint64_t)a : (uint64_t)a;
  uint64_t ub = b < 0 ? 0u - (uint64_t)b : (uint64_t)b;
  return ua < ub || (ua == ub && a < b);
}

static void swap64(int64_t *a, int64_t *b) {
  int64_t t = *a;
  *a = *b;
  *b = t;
}

static void insertion_sort(int64_t *v, size_t n, Cmp less) {
  for (size_t i = 1; i < n; ++i) {
    int64_t x = v[i];
    size_t j = i;
    while (j > 0 && less(x, v[j - 1])) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
}

static void sift_down(int64_t *v, size_t start, size_t n, Cmp less) {
  size_t root = start;
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && less(v[child], v[child + 1])) ++child;
    if (!less(v[root], v[child])) return;
    swap64(&v[root], &v[child]);
    root = child;
  }
}

static void heap_sort(int64_t *v, size_t n, Cmp less) {
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) sift_down(v, i, n, less);
  for (size_t end = n - 1; end > 0; --end) {
    swap64(&v[0], &v[end]);
    sift_down(v, 0, end, less);
  }
}

static size_t median_of_three(int64_t *v, size_t a, size_t b, size_t c, Cmp less) {
  if (less(v[a], v[b])) {
    if (less(v[b], v[c])) return b;
    return less(v[a], v[c]) ? c : a;
  }
  if (less(v[a], v[c])) return a;
  return less(v[b], v[c]) ? c : b;
}

static size_t partition(int64_t *v, size_t n, Cmp less) {
  size_t m = median_of_three(v, 0, n / 2, n - 1, less);
  swap64(&v[m], &v[n - 1]);
  int64_t pivot = v[n - 1];
  size_t store = 0;
  for (size_t i = 0; i + 1 < n; ++i)
    if (less(v[i], pivot)) swap64(&v[i], &v[store++]);
  swap64(&v[store], &v[n - 1]);
  return store;
}

static void intro_sort_rec(int64_t *v, size_t n, int depth, Cmp less) {
  while (n > 16) {
    if (depth-- == 0) {
      heap_sort(v, n, less);
      return;
    }
    size_t p = partition(v, n, less);
    if (p < n - p - 1) {
      intro_sort_rec(v, p, depth, less);
      v += p + 1;
      n -= p + 1;
    } else {
      intro_sort_rec(v + p + 1, n - p - 1, depth, less);
      n = p;
    }
  }
  insertion_sort(v, n, less);
}

static void intro_sort(int64_t *v, size_t n, Cmp less) {
  int depth = 0;
  for (size_t k = n; k > 1; k >>= 1) depth += 2;
  intro_sort_rec(v, n, depth, less);
}

static void merge_runs(const int64_t *src, int64_t *dst, size_t lo, size_t mid, size_t hi, Cmp less) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) dst[k++] = less(src[j], src[i]) ? src[j++] : src[i++];
  while (i < mid) dst[k++] = src[i++];
  while (j < hi) dst[k++] = src[j++];
}

/* Bottom-up merge sort with insertion-sorted runs of 32. Stable. */
static int merge_sort(int64_t *v, size_t n, Cmp less) {
  int64_t *tmp = malloc((n ? n : 1) * sizeof(int64_t));
  if (!tmp) return 0;
  for (size_t i = 0; i < n; i += 32) insertion_sort(v + i, n - i < 32 ? n - i : 32, less);
  int64_t *src = v, *dst = tmp;
  for (size_t width = 32; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      merge_runs(src, dst, lo, mid, hi, less);
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != v) memcpy(v, src, n * sizeof(int64_t));
  free(tmp);
  return 1;
}

/* LSD radix sort on the order-preserving unsigned image of signed keys, 8 bits per pass. */
static int radix_sort(int64_t *v, size_t n) {
  uint64_t *a = malloc((n ? n : 1) * sizeof(uint64_t)), *b = malloc((n ? n : 1) * sizeof(uint64_t));
  if (!a || !b) {
    free(a);
    free(b);
    return 0;
  }
  for (size_t i = 0; i < n; ++i) a[i] = (uint64_t)v[i] ^ 0x8000000000000000ull;
  for (int shift = 0; shift < 64; shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < n; ++i) count[((a[i] >> shift) & 0xffu) + 1]++;
    if (count[1] == n && n) continue; /* all keys share this digit (value 0) */
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (size_t i = 0; i < n; ++i) b[count[(a[i] >> shift) & 0xffu]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  for (size_t i = 0; i < n; ++i) v[i] = (int64_t)(a[i] ^ 0x8000000000000000ull);
  free(a);
  free(b);
  return 1;
}

static int is_sorted(const int64_t *v, size_t n, Cmp less) {
  for (size_t i = 1; i < n; ++i)
    if (less(v[i], v[i - 1])) return 0;
  return 1;
}

static uint64_t fingerprint(const int64_t *v, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ (uint64_t)v[i]) * 1099511628211ull + i;
  return h;
}

static void fill(int64_t *v, size_t n, uint64_t seed, int pattern) {
  uint64_t s = seed | 1u;
  for (size_t i = 0; i < n; ++i) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    uint64_t r = s * 2685821657736338717ull;
    switch (pattern) {
      case 0: v[i] = (int64_t)(r >> 1) - (int64_t)(1ll << 61); break;
      case 1: v[i] = (int64_t)i; break;
      case 2: v[i] = (int64_t)(n - i); break;
      case 3: v[i] = (int64_t)(r % 16u); break;
      default: v[i] = (int64_t)(i % 100) * ((r & 1u) ? -1 : 1); break;
    }
  }
}

/* Sorts the same data with every algorithm (ascending), checks they agree, and also checks
   descending and |x| orders. Returns a fingerprint, or 0 on disagreement/allocation failure. */
uint64_t sort_crosscheck(size_t n, uint64_t seed, int pattern) {
  int64_t *a = malloc((n ? n : 1) * sizeof(int64_t)), *b = malloc((n ? n : 1) * sizeof(int64_t));
  int64_t *c = malloc((n ? n : 1) * sizeof(int64_t));
  uint64_t result = 0;
  if (a && b && c) {
    fill(a, n, seed, pattern);
    memcpy(b, a, n * sizeof(int64_t));
    memcpy(c, a, n * sizeof(int64_t));
    intro_sort(a, n, cmp_asc);
    int ok = merge_sort(b, n, cmp_asc) && radix_sort(c, n);
    ok = ok && is_sorted(a, n, cmp_asc) && memcmp(a, b, n * sizeof(int64_t)) == 0 &&
         memcmp(a, c, n * sizeof(int64_t)) == 0;
    uint64_t fa = fingerprint(a, n);
    intro_sort(b, n, cmp_desc);
    heap_sort(c, n, cmp_abs);
    ok = ok && is_sorted(b, n, cmp_desc) && is_sorted(c, n, cmp_abs);
    if (ok) result = fa ^ (fingerprint(b, n) * 3u) ^ (fingerprint(c, n) * 7u);
  }
  free(a);
  free(b);
  free(c);
  return result;
}

/* Sorts caller data in place: algo 0 introsort, 1 merge sort, 2 radix, 3 heap. Returns 1 on success. */
int sort_int64(int64_t *v, size_t n, int algo) {
  switch (algo) {
    case 0: intro_sort(v, n, cmp_asc); return 1;
    case 1: return merge_sort(v, n, cmp_asc);
    case 2: return radix_sort(v, n);
    case 3: heap_sort(v, n, cmp_asc); return 1;
    default: return 0;
  }
}
