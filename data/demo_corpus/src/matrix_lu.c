/* Dense linear algebra: register-tiled matrix multiply, LU with partial pivoting, solves, determinant, Cholesky. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef struct {
  int rows, cols;
  double *a;
} Mat;

static double *at(Mat *m, int r, int c) { return &m->a[(size_t)r * (size_t)m->cols + (size_t)c]; }

static double get(const Mat *m, int r, int c) { return m->a[(size_t)r * (size_t)m->cols + (size_t)c]; }

static int mat_alloc(Mat *m, int rows, int cols) {
  m->rows = rows;
  m->cols = cols;
  m->a = calloc((size_t)rows * (size_t)cols, sizeof(double));
  return m->a != NULL;
}

static void mat_free(Mat *m) {
  free(m->a);
  m->a = NULL;
}

static void fill_test_matrix(Mat *m, uint32_t seed, double diag_boost) {
  uint32_t x = seed | 1u;
  for (int i = 0; i < m->rows; ++i)
    for (int j = 0; j < m->cols; ++j) {
      x = x * 1103515245u + 12345u;
      *at(m, i, j) = ((double)((x >> 8) & 0xffffu) / 65536.0) - 0.5 + (i == j ? diag_boost : 0.0);
    }
}

/* C = A * B using 4x4 register tiles; edges fall back to a scalar loop. */
static void matmul(const Mat *A, const Mat *B, Mat *C) {
  int n = A->rows, m = B->cols, k = A->cols;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    int j = 0;
    for (; j + 4 <= m; j += 4) {
      double c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      double c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
      for (int p = 0; p < k; ++p) {
        double a0 = get(A, i, p), a1 = get(A, i + 1, p), a2 = get(A, i + 2, p), a3 = get(A, i + 3, p);
        double b0 = get(B, p, j), b1 = get(B, p, j + 1), b2 = get(B, p, j + 2), b3 = get(B, p, j + 3);
        c00 += a0 * b0; c01 += a0 * b1; c02 += a0 * b2; c03 += a0 * b3;
        c10 += a1 * b0; c11 += a1 * b1; c12 += a1 * b2; c13 += a1 * b3;
        c20 += a2 * b0; c21 += a2 * b1; c22 += a2 * b2; c23 += a2 * b3;
        c30 += a3 * b0; c31 += a3 * b1; c32 += a3 * b2; c33 += a3 * b3;
      }
      *at(C, i, j) = c00; *at(C, i, j + 1) = c01; *at(C, i, j + 2) = c02; *at(C, i, j + 3) = c03;
      *at(C, i + 1, j) = c10; *at(C, i + 1, j + 1) = c11; *at(C, i + 1, j + 2) = c12; *at(C, i + 1, j + 3) = c13;
      *at(C, i + 2, j) = c20; *at(C, i + 2, j + 1) = c21; *at(C, i + 2, j + 2) = c22; *at(C, i + 2, j + 3) = c23;
      *at(C, i + 3, j) = c30; *at(C, i + 3, j + 1) = c31; *at(C, i + 3, j + 2) = c32; *at(C, i + 3, j + 3) = c33;
    }
    for (; j < m; ++j)
      for (int r = i; r < i + 4; ++r) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += get(A, r, p) * get(B, p, j);
        *at(C, r, j) = s;
      }
  }
  for (; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += get(A, i, p) * get(B, p, j);
      *at(C, i, j) = s;
    }
}

static void swap_rows(Mat *m, int r1, int r2) {
  if (r1 == r2) return;
  for (int c = 0; c < m->cols; ++c) {
    double t = *at(m, r1, c);
    *at(m, r1, c) = *at(m, r2, c);
    *at(m, r2, c) = t;
  }
}

/* In-place LU with partial pivoting; returns the permutation sign or 0 if singular. */
static int lu_decompose(Mat *m, int *perm) {
  int n = m->rows, sign = 1;
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int k = 0; k < n; ++k) {
    int piv = k;
    double best = fabs(get(m, k, k));
    for (int r = k + 1; r < n; ++r)
      if (fabs(get(m, r, k)) > best) {
        best = fabs(get(m, r, k));
        piv = r;
      }
    if (best < 1e-300) return 0;
    if (piv != k) {
      swap_rows(m, piv, k);
      int t = perm[piv];
      perm[piv] = perm[k];
      perm[k] = t;
      sign = -sign;
    }
    double inv = 1.0 / get(m, k, k);
    for (int r = k + 1; r < n; ++r) {
      double f = get(m, r, k) * inv;
      *at(m, r, k) = f;
      double *row = at(m, r, 0);
      const double *prow = at(m, k, 0);
      int c = k + 1;
      for (; c + 4 <= n; c += 4) {
        row[c] -= f * prow[c];
        row[c + 1] -= f * prow[c + 1];
        row[c + 2] -= f * prow[c + 2];
        row[c + 3] -= f * prow[c + 3];
      }
      for (; c < n; ++c) row[c] -= f * prow[c];
    }
  }
  return sign;
}

static void lu_solve(const Mat *lu, const int *perm, const double *b, double *x) {
  int n = lu->rows;
  for (int i = 0; i < n; ++i) {
    double s = b[perm[i]];
    for (int j = 0; j < i; ++j) s -= get(lu, i, j) * x[j];
    x[i] = s;
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int j = i + 1; j < n; ++j) s -= get(lu, i, j) * x[j];
    x[i] = s / get(lu, i, i);
  }
}

static double determinant_from_lu(const Mat *lu, int sign) {
  double d = sign;
  for (int i = 0; i < lu->rows; ++i) d *= get(lu, i, i);
  return d;
}

static int cholesky(const Mat *a, Mat *l) {
  int n = a->rows;
  for (int j = 0; j < n; ++j) {
    double s = get(a, j, j);
    for (int k = 0; k < j; ++k) s -= get(l, j, k) * get(l, j, k);
    if (s <= 0) return 0;
    double d = sqrt(s);
    *at(l, j, j) = d;
    for (int i = j + 1; i < n; ++i) {
      double t = get(a, i, j);
      for (int k = 0; k < j; ++k) t -= get(l, i, k) * get(l, j, k);
      *at(l, i, j) = t / d;
    }
  }
  return 1;
}

/* Builds a random diagonally dominant n x n system, solves it by LU and returns the max residual
   |Ax - b|; stores det(A) in *det. Returns -1 on failure. */
double mat_lu_residual(int n, uint32_t seed, double *det) {
  Mat A, LU;
  if (n <= 0 || n > 512) return -1;
  if (!mat_alloc(&A, n, n) || !mat_alloc(&LU, n, n)) {
    mat_free(&A);
    return -1;
  }
  int *perm = malloc((size_t)n * sizeof(int));
  double *b = malloc((size_t)n * sizeof(double)), *x = malloc((size_t)n * sizeof(double));
  double worst = -1;
  if (perm && b && x) {
    fill_test_matrix(&A, seed, n * 0.5);
    memcpy(LU.a, A.a, (size_t)n * (size_t)n * sizeof(double));
    for (int i = 0; i < n; ++i) b[i] = (double)(i % 7) - 3.0;
    int sign = lu_decompose(&LU, perm);
    if (sign) {
      lu_solve(&LU, perm, b, x);
      *det = determinant_from_lu(&LU, sign);
      worst = 0;
      for (int i = 0; i < n; ++i) {
        double s = -b[i];
        for (int j = 0; j < n; ++j) s += get(&A, i, j) * x[j];
        if (fabs(s) > worst) worst = fabs(s);
      }
    }
  }
  free(perm);
  free(b);
  free(x);
  mat_free(&A);
  mat_free(&LU);
  return worst;
}

/* Computes (A*A^T + n I), Cholesky-factors it, multiplies L*L^T back and returns the largest
   reconstruction error; also returns the trace of the tiled product A*B in *trace. */
double mat_product_check(int n, uint32_t seed, double *trace) {
  Mat A, At, G, L, Lt, R;
  if (n <= 0 || n > 256) return -1;
  int ok = mat_alloc(&A, n, n) & mat_alloc(&At, n, n) & mat_alloc(&G, n, n) & mat_alloc(&L, n, n) &
           mat_alloc(&Lt, n, n) & mat_alloc(&R, n, n);
  double err = -1;
  if (ok) {
    fill_test_matrix(&A, seed, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) *at(&At, j, i) = get(&A, i, j);
    matmul(&A, &At, &G);
    *trace = 0;
    for (int i = 0; i < n; ++i) {
      *at(&G, i, i) += n;
      *trace += get(&G, i, i);
    }
    if (cholesky(&G, &L)) {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) *at(&Lt, j, i) = get(&L, i, j);
      matmul(&L, &Lt, &R);
      err = 0;
      for (int i = 0; i < n * n; ++i)
        if (fabs(R.a[i] - G.a[i]) > err) err = fabs(R.a[i] - G.a[i]);
    }
  }
  mat_free(&A);
  mat_free(&At);
  mat_free(&G);
  mat_free(&L);
  mat_free(&Lt);
  mat_free(&R);
  return err;
}
