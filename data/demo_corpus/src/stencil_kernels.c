/* Stencil kernels: 2D Jacobi and 9-point smoothing, red-black Gauss-Seidel Poisson, 3D heat, Sobel, Life. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef struct {
  int nx, ny;
  double *v;
} Grid2;

static size_t idx2(const Grid2 *g, int x, int y) { return (size_t)y * (size_t)g->nx + (size_t)x; }

static int grid_alloc(Grid2 *g, int nx, int ny) {
  g->nx = nx;
  g->ny = ny;
  g->v = calloc((size_t)nx * (size_t)ny, sizeof(double));
  return g->v != NULL;
}

static void set_boundary(Grid2 *g, double top, double bottom) {
  for (int x = 0; x < g->nx; ++x) {
    g->v[idx2(g, x, 0)] = top;
    g->v[idx2(g, x, g->ny - 1)] = bottom;
  }
  for (int y = 0; y < g->ny; ++y) {
    g->v[idx2(g, 0, y)] = 0.5 * (top + bottom);
    g->v[idx2(g, g->nx - 1, y)] = 0.5 * (top + bottom);
  }
}

static double jacobi_sweep(const Grid2 *in, Grid2 *out) {
  double delta = 0;
  int nx = in->nx;
  for (int y = 1; y < in->ny - 1; ++y) {
    const double *up = in->v + idx2(in, 0, y - 1), *mid = in->v + idx2(in, 0, y), *dn = in->v + idx2(in, 0, y + 1);
    double *o = out->v + idx2(out, 0, y);
    for (int x = 1; x < nx - 1; ++x) {
      double nv = 0.25 * (up[x] + dn[x] + mid[x - 1] + mid[x + 1]);
      double d = fabs(nv - mid[x]);
      if (d > delta) delta = d;
      o[x] = nv;
    }
  }
  return delta;
}

static void smooth9(const Grid2 *in, Grid2 *out) {
  int nx = in->nx;
  for (int y = 1; y < in->ny - 1; ++y) {
    const double *up = in->v + idx2(in, 0, y - 1), *mid = in->v + idx2(in, 0, y), *dn = in->v + idx2(in, 0, y + 1);
    double *o = out->v + idx2(out, 0, y);
    for (int x = 1; x < nx - 1; ++x) {
      double corners = up[x - 1] + up[x + 1] + dn[x - 1] + dn[x + 1];
      double edges = up[x] + dn[x] + mid[x - 1] + mid[x + 1];
      o[x] = (4.0 * mid[x] + 2.0 * edges + corners) / 16.0;
    }
  }
}

static double residual_norm(const Grid2 *u, const Grid2 *f, double h2) {
  double sum = 0;
  for (int y = 1; y < u->ny - 1; ++y)
    for (int x = 1; x < u->nx - 1; ++x) {
      double lap = u->v[idx2(u, x - 1, y)] + u->v[idx2(u, x + 1, y)] + u->v[idx2(u, x, y - 1)] +
                   u->v[idx2(u, x, y + 1)] - 4.0 * u->v[idx2(u, x, y)];
      double r = f->v[idx2(f, x, y)] * h2 - lap;
      sum += r * r;
    }
  return sqrt(sum);
}

static void gauss_seidel_colour(Grid2 *u, const Grid2 *f, double h2, int colour, double omega) {
  for (int y = 1; y < u->ny - 1; ++y) {
    int x0 = 1 + ((y + colour + 1) & 1);
    for (int x = x0; x < u->nx - 1; x += 2) {
      size_t i = idx2(u, x, y);
      double gs = 0.25 * (u->v[i - 1] + u->v[i + 1] + u->v[i - (size_t)u->nx] + u->v[i + (size_t)u->nx] -
                          f->v[i] * h2);
      u->v[i] += omega * (gs - u->v[i]);
    }
  }
}

/* Runs Jacobi iterations on an n x n plate until the update falls below tol or iters run out;
   alternates with a 9-point smoothing pass every 8 sweeps. Returns the centre temperature. */
double stencil_heat_plate(int n, int iters, double tol, int *used) {
  Grid2 a, b;
  *used = 0;
  if (n < 3 || n > 2048) return -1;
  if (!grid_alloc(&a, n, n) || !grid_alloc(&b, n, n)) {
    free(a.v);
    return -1;
  }
  set_boundary(&a, 100.0, 0.0);
  set_boundary(&b, 100.0, 0.0);
  Grid2 *cur = &a, *nxt = &b;
  for (int it = 0; it < iters; ++it) {
    double d = jacobi_sweep(cur, nxt);
    Grid2 *t = cur;
    cur = nxt;
    nxt = t;
    ++*used;
    if (it % 8 == 7) {
      smooth9(cur, nxt);
      t = cur;
      cur = nxt;
      nxt = t;
    }
    if (d < tol) break;
  }
  double centre = cur->v[idx2(cur, n / 2, n / 2)];
  free(a.v);
  free(b.v);
  return centre;
}

/* Solves the Poisson problem lap(u) = f with a point source by SOR red-black sweeps;
   returns the final residual norm. */
double stencil_poisson_sor(int n, int sweeps, double omega) {
  Grid2 u, f;
  if (n < 3 || n > 1024) return -1;
  if (!grid_alloc(&u, n, n) || !grid_alloc(&f, n, n)) {
    free(u.v);
    return -1;
  }
  double h = 1.0 / (n - 1), h2 = h * h;
  f.v[idx2(&f, n / 2, n / 2)] = -1.0 / h2;
  f.v[idx2(&f, n / 4, n / 3)] = 0.5 / h2;
  for (int s = 0; s < sweeps; ++s) {
    gauss_seidel_colour(&u, &f, h2, 0, omega);
    gauss_seidel_colour(&u, &f, h2, 1, omega);
  }
  double r = residual_norm(&u, &f, h2);
  free(u.v);
  free(f.v);
  return r;
}

/* 7-point explicit heat equation on an n^3 cube with a hot core; returns total heat after steps. */
double stencil_heat3d(int n, int steps, double alpha) {
  if (n < 3 || n > 128 || alpha <= 0 || alpha > 1.0 / 6.0) return -1;
  size_t total = (size_t)n * (size_t)n * (size_t)n, sx = 1, sy = (size_t)n, sz = (size_t)n * (size_t)n;
  double *a = calloc(total, sizeof(double)), *b = calloc(total, sizeof(double));
  double heat = -1;
  if (a && b) {
    for (int z = n / 3; z < 2 * n / 3; ++z)
      for (int y = n / 3; y < 2 * n / 3; ++y)
        for (int x = n / 3; x < 2 * n / 3; ++x) a[(size_t)z * sz + (size_t)y * sy + (size_t)x] = 1.0;
    for (int s = 0; s < steps; ++s) {
      for (int z = 1; z < n - 1; ++z)
        for (int y = 1; y < n - 1; ++y)
          for (int x = 1; x < n - 1; ++x) {
            size_t i = (size_t)z * sz + (size_t)y * sy + (size_t)x * sx;
            double c = a[i];
            double lap = a[i - sx] + a[i + sx] + a[i - sy] + a[i + sy] + a[i - sz] + a[i + sz] - 6.0 * c;
            b[i] = c + alpha * lap;
          }
      double *t = a;
      a = b;
      b = t;
    }
    heat = 0;
    for (size_t i = 0; i < total; ++i) heat += a[i];
  }
  free(a);
  free(b);
  return heat;
}

/* Sobel edge magnitude over a synthetic w x h image; returns the number of edge pixels above thr. */
long stencil_sobel_edges(int w, int h, int thr) {
  if (w < 3 || h < 3 || w > 4096 || h > 4096) return -1;
  uint8_t *img = malloc((size_t)w * (size_t)h);
  if (!img) return -1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int dx = x - w / 2, dy = y - h / 2;
      img[(size_t)y * (size_t)w + (size_t)x] = (uint8_t)((dx * dx + dy * dy < (w * w) / 9) ? 200 : 30 + (x & 15));
    }
  long edges = 0;
  for (int y = 1; y < h - 1; ++y) {
    const uint8_t *r0 = img + (size_t)(y - 1) * (size_t)w, *r1 = r0 + w, *r2 = r1 + w;
    for (int x = 1; x < w - 1; ++x) {
      int gx = (r0[x + 1] + 2 * r1[x + 1] + r2[x + 1]) - (r0[x - 1] + 2 * r1[x - 1] + r2[x - 1]);
      int gy = (r2[x - 1] + 2 * r2[x] + r2[x + 1]) - (r0[x - 1] + 2 * r0[x] + r0[x + 1]);
      if (gx * gx + gy * gy > thr * thr) ++edges;
    }
  }
  free(img);
  return edges;
}

/* Conway's Life on a torus; returns the live-cell count after gens generations. */
long stencil_life(int w, int h, int gens, uint32_t seed) {
  if (w < 3 || h < 3 || w > 1024 || h > 1024) return -1;
  uint8_t *a = malloc((size_t)w * (size_t)h), *b = malloc((size_t)w * (size_t)h);
  long live = -1;
  if (a && b) {
    uint32_t x = seed | 1u;
    for (size_t i = 0; i < (size_t)w * (size_t)h; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      a[i] = (x & 3u) == 0;
    }
    for (int g = 0; g < gens; ++g) {
      for (int y = 0; y < h; ++y) {
        int ym = (y + h - 1) % h, yp = (y + 1) % h;
        for (int xx = 0; xx < w; ++xx) {
          int xm = (xx + w - 1) % w, xp = (xx + 1) % w;
          int nb = a[ym * w + xm] + a[ym * w + xx] + a[ym * w + xp] + a[y * w + xm] + a[y * w + xp] +
                   a[yp * w + xm] + a[yp * w + xx] + a[yp * w + xp];
          uint8_t alive = a[y * w + xx];
          b[y * w + xx] = (uint8_t)(nb == 3 || (alive && nb == 2));
        }
      }
      uint8_t *t = a;
      a = b;
      b = t;
    }
    live = 0;
    for (size_t i = 0; i < (size_t)w * (size_t)h; ++i) live += a[i];
  }
  free(a);
  free(b);
  return live;
}
