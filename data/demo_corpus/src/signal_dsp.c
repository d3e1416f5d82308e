/* Signal processing kernels: radix-2 FFT, FFT-based and direct convolution, 8x8 DCT with quantisation, FIR. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define PI 3.14159265358979323846

static int is_power_of_two(size_t n) { return n && !(n & (n - 1)); }

static void bit_reverse(double *re, double *im, size_t n) {
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
}

static void fft(double *re, double *im, size_t n, int inverse) {
  bit_reverse(re, im, n);
  for (size_t len = 2; len <= n; len <<= 1) {
    double ang = (inverse ? 2.0 : -2.0) * PI / (double)len;
    double wr = cos(ang), wi = sin(ang);
    size_t half = len / 2;
    for (size_t i = 0; i < n; i += len) {
      double cr = 1.0, ci = 0.0;
      for (size_t k = 0; k < half; ++k) {
        double ur = re[i + k], ui = im[i + k];
        double xr = re[i + k + half], xi = im[i + k + half];
        double vr = xr * cr - xi * ci, vi = xr * ci + xi * cr;
        re[i + k] = ur + vr;
        im[i + k] = ui + vi;
        re[i + k + half] = ur - vr;
        im[i + k + half] = ui - vi;
        double ncr = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = ncr;
      }
    }
  }
  if (inverse)
    for (size_t i = 0; i < n; ++i) {
      re[i] /= (double)n;
      im[i] /= (double)n;
    }
}

static void convolve_direct(const double *a, size_t na, const double *b, size_t nb, double *out) {
  for (size_t i = 0; i < na + nb - 1; ++i) out[i] = 0.0;
  for (size_t i = 0; i < na; ++i) {
    double ai = a[i];
    size_t j = 0;
    for (; j + 4 <= nb; j += 4) {
      out[i + j] += ai * b[j];
      out[i + j + 1] += ai * b[j + 1];
      out[i + j + 2] += ai * b[j + 2];
      out[i + j + 3] += ai * b[j + 3];
    }
    for (; j < nb; ++j) out[i + j] += ai * b[j];
  }
}

static int convolve_fft(const double *a, size_t na, const double *b, size_t nb, double *out) {
  size_t n = 1;
  while (n < na + nb - 1) n <<= 1;
  double *buf = calloc(4 * n, sizeof(double));
  if (!buf) return 0;
  double *ar = buf, *ai = buf + n, *br = buf + 2 * n, *bi = buf + 3 * n;
  memcpy(ar, a, na * sizeof(double));
  memcpy(br, b, nb * sizeof(double));
  fft(ar, ai, n, 0);
  fft(br, bi, n, 0);
  for (size_t i = 0; i < n; ++i) {
    double r = ar[i] * br[i] - ai[i] * bi[i];
    double im = ar[i] * bi[i] + ai[i] * br[i];
    ar[i] = r;
    ai[i] = im;
  }
  fft(ar, ai, n, 1);
  memcpy(out, ar, (na + nb - 1) * sizeof(double));
  free(buf);
  return 1;
}

static double dct_cos[8][8];
static int dct_ready;

static void dct_init(void) {
  if (dct_ready) return;
  for (int u = 0; u < 8; ++u)
    for (int x = 0; x < 8; ++x) dct_cos[u][x] = cos((2.0 * x + 1.0) * u * PI / 16.0) * (u ? 0.5 : 0.5 / sqrt(2.0));
  dct_ready = 1;
}

/* One 8-point DCT-II row with all products kept live. */
static void dct8(const double *in, double *out, size_t stride_in, size_t stride_out) {
  double x0 = in[0], x1 = in[stride_in], x2 = in[2 * stride_in], x3 = in[3 * stride_in];
  double x4 = in[4 * stride_in], x5 = in[5 * stride_in], x6 = in[6 * stride_in], x7 = in[7 * stride_in];
  for (int u = 0; u < 8; ++u) {
    const double *c = dct_cos[u];
    out[(size_t)u * stride_out] =
        x0 * c[0] + x1 * c[1] + x2 * c[2] + x3 * c[3] + x4 * c[4] + x5 * c[5] + x6 * c[6] + x7 * c[7];
  }
}

static void idct8(const double *in, double *out, size_t stride_in, size_t stride_out) {
  double y0 = in[0], y1 = in[stride_in], y2 = in[2 * stride_in], y3 = in[3 * stride_in];
  double y4 = in[4 * stride_in], y5 = in[5 * stride_in], y6 = in[6 * stride_in], y7 = in[7 * stride_in];
  for (int x = 0; x < 8; ++x) {
    out[(size_t)x * stride_out] = y0 * dct_cos[0][x] + y1 * dct_cos[1][x] + y2 * dct_cos[2][x] +
                                  y3 * dct_cos[3][x] + y4 * dct_cos[4][x] + y5 * dct_cos[5][x] +
                                  y6 * dct_cos[6][x] + y7 * dct_cos[7][x];
  }
}

static void block_transform(const double *in, double *out, int inverse) {
  double tmp[64];
  dct_init();
  for (int r = 0; r < 8; ++r) {
    if (inverse)
      idct8(in + 8 * r, tmp + 8 * r, 1, 1);
    else
      dct8(in + 8 * r, tmp + 8 * r, 1, 1);
  }
  for (int c = 0; c < 8; ++c) {
    if (inverse)
      idct8(tmp + c, out + c, 8, 8);
    else
      dct8(tmp + c, out + c, 8, 8);
  }
}

static int quantise(double v, int q) {
  double s = v / q;
  return (int)(s < 0 ? s - 0.5 : s + 0.5);
}

/* Returns the largest absolute difference between direct and FFT convolution of two
   deterministic signals of lengths na and nb (each at most 4096), or -1 on failure. */
double dsp_convolution_check(size_t na, size_t nb) {
  if (!na || !nb || na > 4096 || nb > 4096) return -1;
  double *a = malloc(na * sizeof(double)), *b = malloc(nb * sizeof(double));
  double *d = malloc((na + nb) * sizeof(double)), *f = malloc((na + nb) * sizeof(double));
  double worst = -1;
  if (a && b && d && f) {
    for (size_t i = 0; i < na; ++i) a[i] = sin(0.01 * (double)i) + 0.25 * cos(0.37 * (double)i);
    for (size_t i = 0; i < nb; ++i) b[i] = exp(-0.05 * (double)i);
    convolve_direct(a, na, b, nb, d);
    if (convolve_fft(a, na, b, nb, f)) {
      worst = 0;
      for (size_t i = 0; i < na + nb - 1; ++i)
        if (fabs(d[i] - f[i]) > worst) worst = fabs(d[i] - f[i]);
    }
  }
  free(a);
  free(b);
  free(d);
  free(f);
  return worst;
}

/* Power spectrum peak: returns the bin index with most energy of an n-point FFT of a
   two-tone signal (n must be a power of two, at most 65536), or -1. */
long dsp_spectrum_peak(size_t n, double f1, double f2) {
  if (!is_power_of_two(n) || n > 65536) return -1;
  double *re = malloc(n * sizeof(double)), *im = calloc(n, sizeof(double));
  long peak = -1;
  if (re && im) {
    for (size_t i = 0; i < n; ++i) re[i] = sin(2 * PI * f1 * (double)i / (double)n) + 0.5 * sin(2 * PI * f2 * (double)i / (double)n);
    fft(re, im, n, 0);
    double best = -1;
    for (size_t k = 0; k < n / 2; ++k) {
      double p = re[k] * re[k] + im[k] * im[k];
      if (p > best) {
        best = p;
        peak = (long)k;
      }
    }
  }
  free(re);
  free(im);
  return peak;
}

/* JPEG-like round trip of a w x h greyscale gradient image (multiples of 8): forward DCT,
   quantise with quality q (1..100), dequantise, inverse DCT. Returns PSNR in dB, -1 on error. */
double dsp_dct_psnr(int w, int h, int q) {
  if (w <= 0 || h <= 0 || w % 8 || h % 8 || q < 1 || q > 100 || w > 1024 || h > 1024) return -1;
  double blk[64], coef[64], rec[64], sse = 0;
  int step = (100 - q) / 5 + 1;
  for (int by = 0; by < h; by += 8)
    for (int bx = 0; bx < w; bx += 8) {
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
          int px = bx + x, py = by + y;
          blk[8 * y + x] = (double)((px * 3 + py * 5 + ((px ^ py) & 15)) % 256) - 128.0;
        }
      block_transform(blk, coef, 0);
      for (int i = 0; i < 64; ++i) {
        int qi = step * (1 + (i / 8 + i % 8) / 2);
        coef[i] = (double)quantise(coef[i], qi) * qi;
      }
      block_transform(coef, rec, 1);
      for (int i = 0; i < 64; ++i) sse += (rec[i] - blk[i]) * (rec[i] - blk[i]);
    }
  double mse = sse / ((double)w * (double)h);
  return mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : 99.0;
}

/* Applies an 8-tap FIR low-pass filter to a ramp-plus-noise signal; returns the output energy. */
double dsp_fir_energy(size_t n) {
  static const double taps[8] = {0.02, 0.06, 0.16, 0.26, 0.26, 0.16, 0.06, 0.02};
  double energy = 0, h[8] = {0};
  uint32_t x = 12345u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    double s = 0.001 * (double)(i % 1000) + ((double)(x >> 16) / 65536.0 - 0.5);
    h[7] = h[6]; h[6] = h[5]; h[5] = h[4]; h[4] = h[3]; h[3] = h[2]; h[2] = h[1]; h[1] = h[0]; h[0] = s;
    double y = taps[0] * h[0] + taps[1] * h[1] + taps[2] * h[2] + taps[3] * h[3] + taps[4] * h[4] +
               taps[5] * h[5] + taps[6] * h[6] + taps[7] * h[7];
    energy += y * y;
  }
  return energy;
}
