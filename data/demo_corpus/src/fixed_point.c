/* Q16.16 fixed-point arithmetic: saturating ops, sqrt, CORDIC sin/cos/atan2, exp/log, a biquad and a Mandelbrot. */
#include <stddef.h>
#include <stdint.h>

typedef int32_t fx;

#define FX_ONE 65536
#define FX_MAX INT32_MAX
#define FX_MIN INT32_MIN
#define FX_PI 205887        /* pi * 65536 */
#define FX_HALF_PI 102944
#define FX_LN2 45426        /* ln(2) * 65536 */
#define CORDIC_ITERS 16

/* atan(2^-i) in Q16.16 */
static const fx kAtanTable[CORDIC_ITERS] = {51472, 30386, 16055, 8150, 4091, 2047, 1024, 512,
                                             256,   128,   64,    32,   16,   8,    4,    2};
#define CORDIC_GAIN_INV 39797 /* 1/K * 65536 */

static fx saturate(int64_t v) {
  if (v > FX_MAX) return FX_MAX;
  if (v < FX_MIN) return FX_MIN;
  return (fx)v;
}

static fx fx_from_int(int v) { return saturate((int64_t)v * FX_ONE); }

static fx fx_add(fx a, fx b) { return saturate((int64_t)a + b); }

static fx fx_sub(fx a, fx b) { return saturate((int64_t)a - b); }

static fx fx_mul(fx a, fx b) {
  int64_t p = (int64_t)a * b;
  /* round half away from zero before dropping 16 fraction bits */
  int64_t q = p >= 0 ? (p + 32768) / 65536 : -((-p + 32768) / 65536);
  return saturate(q);
}

static fx fx_div(fx a, fx b) {
  if (b == 0) return a >= 0 ? FX_MAX : FX_MIN;
  int64_t n = (int64_t)a * 65536;
  return saturate(n / b);
}

static fx fx_abs(fx a) { return a == FX_MIN ? FX_MAX : (a < 0 ? -a : a); }

/* Square root via integer Newton iteration on the 64-bit scaled value. */
static fx fx_sqrt(fx a) {
  if (a <= 0) return 0;
  uint64_t n = (uint64_t)a << 16;
  uint64_t x = n, y = (x + 1) / 2;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2;
  }
  return (fx)x;
}

/* Rotation-mode CORDIC for angles in [-pi/2, pi/2]. */
static void cordic_rotate(fx angle, fx *cos_out, fx *sin_out) {
  int64_t x = CORDIC_GAIN_INV, y = 0, z = angle;
  for (int i = 0; i < CORDIC_ITERS; ++i) {
    int64_t dx = x / ((int64_t)1 << i), dy = y / ((int64_t)1 << i);
    if (z >= 0) {
      x -= dy;
      y += dx;
      z -= kAtanTable[i];
    } else {
      x += dy;
      y -= dx;
      z += kAtanTable[i];
    }
  }
  *cos_out = saturate(x);
  *sin_out = saturate(y);
}

static fx reduce_angle(fx a) {
  int64_t t = a;
  int64_t two_pi = 2 * (int64_t)FX_PI;
  t %= two_pi;
  if (t > FX_PI) t -= two_pi;
  if (t < -FX_PI) t += two_pi;
  return (fx)t;
}

static void fx_sincos(fx angle, fx *s, fx *c) {
  fx a = reduce_angle(angle);
  int flip = 0;
  if (a > FX_HALF_PI) {
    a = FX_PI - a;
    flip = 1;
  } else if (a < -FX_HALF_PI) {
    a = -FX_PI - a;
    flip = 1;
  }
  cordic_rotate(a, c, s);
  if (flip) *c = -*c;
}

/* Vectoring-mode CORDIC atan2. */
static fx fx_atan2(fx y, fx x) {
  if (x == 0 && y == 0) return 0;
  int64_t xx = x, yy = y, z = 0;
  if (xx < 0) {
    xx = -xx;
    yy = -yy;
    z = y >= 0 ? FX_PI : -FX_PI;
  }
  for (int i = 0; i < CORDIC_ITERS; ++i) {
    int64_t dx = xx / ((int64_t)1 << i), dy = yy / ((int64_t)1 << i);
    if (yy > 0) {
      xx += dy;
      yy -= dx;
      z += kAtanTable[i];
    } else {
      xx -= dy;
      yy += dx;
      z -= kAtanTable[i];
    }
  }
  return (fx)reduce_angle(saturate(z));
}

/* exp via range reduction x = k ln2 + r and a 6-term Taylor series on r. */
static fx fx_exp(fx x) {
  if (x > 681391) return FX_MAX; /* ~10.4 */
  if (x < -772243) return 0;
  int k = (int)(x / FX_LN2);
  fx r = x - k * FX_LN2;
  fx term = FX_ONE, sum = FX_ONE;
  for (int i = 1; i <= 6; ++i) {
    term = fx_div(fx_mul(term, r), fx_from_int(i));
    sum = fx_add(sum, term);
  }
  int64_t v = sum;
  if (k >= 0)
    v *= (int64_t)1 << k;
  else
    v /= (int64_t)1 << -k;
  return saturate(v);
}

/* log via normalisation into [1, 2) and the atanh series on (m-1)/(m+1). */
static fx fx_log(fx x) {
  if (x <= 0) return FX_MIN;
  int k = 0;
  int64_t m = x;
  while (m >= 2 * FX_ONE) {
    m /= 2;
    ++k;
  }
  while (m < FX_ONE) {
    m *= 2;
    --k;
  }
  fx t = fx_div((fx)(m - FX_ONE), (fx)(m + FX_ONE));
  fx t2 = fx_mul(t, t), pow = t, sum = 0;
  for (int i = 1; i <= 9; i += 2) {
    sum = fx_add(sum, fx_div(pow, fx_from_int(i)));
    pow = fx_mul(pow, t2);
  }
  return fx_add(fx_mul(sum, 2 * FX_ONE), saturate((int64_t)k * FX_LN2));
}

/* Returns the worst absolute error (in Q16.16 units) of sin^2+cos^2=1 and atan2(sin,cos)=angle
   over n angles spread across [-4pi, 4pi], plus exp(log(x)) = x over a range. */
int32_t fx_selftest(int n) {
  int32_t worst = 0;
  for (int i = 0; i < n; ++i) {
    fx angle = saturate(-4 * (int64_t)FX_PI + (int64_t)i * 8 * FX_PI / (n > 1 ? n - 1 : 1));
    fx s, c;
    fx_sincos(angle, &s, &c);
    fx unit = fx_add(fx_mul(s, s), fx_mul(c, c));
    int32_t e1 = fx_abs(fx_sub(unit, FX_ONE));
    fx back = fx_atan2(s, c);
    int32_t e2 = fx_abs(fx_sub(reduce_angle(fx_sub(back, reduce_angle(angle))), 0));
    if (e2 > FX_PI) e2 = 2 * FX_PI - e2;
    fx x = fx_from_int(1 + i % 50);
    int32_t e3 = fx_abs(fx_sub(fx_exp(fx_log(x)), x)) / (1 + i % 50);
    if (e1 > worst) worst = e1;
    if (e2 > worst) worst = e2;
    if (e3 > worst) worst = e3;
  }
  return worst;
}

/* Runs a fixed-point biquad low-pass (coefficients in Q16.16) over a square wave; returns the
   sum of absolute outputs. */
int64_t fx_biquad_run(int samples, fx b0, fx b1, fx b2, fx a1, fx a2) {
  fx x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  int64_t total = 0;
  for (int i = 0; i < samples; ++i) {
    fx x = (i / 32) % 2 ? FX_ONE : -FX_ONE;
    fx y = fx_sub(fx_add(fx_add(fx_mul(b0, x), fx_mul(b1, x1)), fx_mul(b2, x2)), fx_add(fx_mul(a1, y1), fx_mul(a2, y2)));
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    total += fx_abs(y);
  }
  return total;
}

/* Fixed-point Mandelbrot over a w x h grid of [-2,1]x[-1.5,1.5]; returns total iterations. */
int64_t fx_mandelbrot(int w, int h, int max_iter) {
  int64_t total = 0;
  if (w <= 1 || h <= 1 || w > 4096 || h > 4096) return 0;
  for (int py = 0; py < h; ++py) {
    fx ci = fx_sub(fx_div(fx_from_int(3 * py), fx_from_int(h - 1)), FX_ONE + FX_ONE / 2);
    for (int px = 0; px < w; ++px) {
      fx cr = fx_sub(fx_div(fx_from_int(3 * px), fx_from_int(w - 1)), 2 * FX_ONE);
      fx zr = 0, zi = 0;
      int it = 0;
      while (it < max_iter) {
        fx zr2 = fx_mul(zr, zr), zi2 = fx_mul(zi, zi);
        if (fx_add(zr2, zi2) > 4 * FX_ONE) break;
        fx nzi = fx_add(fx_mul(2 * FX_ONE, fx_mul(zr, zi)), ci);
        zr = fx_add(fx_sub(zr2, zi2), cr);
        zi = nzi;
        ++it;
      }
      total += it;
    }
  }
  return total;
}

/* Integer sqrt table check: returns the count of v in [0, n) with fx_sqrt(v^2) != v (Q16.16). */
int fx_sqrt_mismatches(int n) {
  int bad = 0;
  for (int v = 0; v < n && v < 181; ++v) {
    fx x = fx_from_int(v);
    fx r = fx_sqrt(fx_mul(x, x));
    if (fx_abs(fx_sub(r, x)) > 1) ++bad;
  }
  return bad;
}
