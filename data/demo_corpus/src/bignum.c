/* Arbitrary-precision unsigned integers: add, sub, mul, Knuth long division, modexp, decimal I/O. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BN_LIMBS 160

typedef struct {
  uint32_t d[BN_LIMBS];
  int n; /* number of significant limbs; 0 means zero */
} Big;

static void bn_trim(Big *a) {
  while (a->n > 0 && a->d[a->n - 1] == 0) a->n--;
}

static void bn_set_u64(Big *a, uint64_t v) {
  memset(a->d, 0, sizeof a->d);
  a->d[0] = (uint32_t)v;
  a->d[1] = (uint32_t)(v >> 32);
  a->n = 2;
  bn_trim(a);
}

static int bn_cmp(const Big *a, const Big *b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  for (int i = a->n - 1; i >= 0; --i)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

/* r = a + b; returns 0 on overflow of the fixed capacity. */
static int bn_add(Big *r, const Big *a, const Big *b) {
  int n = a->n > b->n ? a->n : b->n;
  uint64_t carry = 0;
  Big out;
  memset(out.d, 0, sizeof out.d);
  for (int i = 0; i < n; ++i) {
    uint64_t s = carry + (i < a->n ? a->d[i] : 0u) + (i < b->n ? b->d[i] : 0u);
    out.d[i] = (uint32_t)s;
    carry = s >> 32;
  }
  if (carry) {
    if (n >= BN_LIMBS) return 0;
    out.d[n++] = (uint32_t)carry;
  }
  out.n = n;
  *r = out;
  return 1;
}

/* r = a - b, requires a >= b. */
static void bn_sub(Big *r, const Big *a, const Big *b) {
  uint32_t borrow = 0;
  Big out = *a;
  for (int i = 0; i < a->n; ++i) {
    uint32_t x = a->d[i], y = i < b->n ? b->d[i] : 0u;
    uint32_t diff = x - y - borrow;
    borrow = (x < y) || (x - y < borrow);
    out.d[i] = diff;
  }
  bn_trim(&out);
  *r = out;
}

static int bn_mul(Big *r, const Big *a, const Big *b) {
  if (a->n + b->n > BN_LIMBS) return 0;
  Big out;
  memset(out.d, 0, sizeof out.d);
  for (int i = 0; i < a->n; ++i) {
    uint64_t carry = 0, ai = a->d[i];
    int j = 0;
    for (; j + 2 <= b->n; j += 2) {
      uint64_t t0 = ai * b->d[j] + out.d[i + j] + carry;
      out.d[i + j] = (uint32_t)t0;
      uint64_t t1 = ai * b->d[j + 1] + out.d[i + j + 1] + (t0 >> 32);
      out.d[i + j + 1] = (uint32_t)t1;
      carry = t1 >> 32;
    }
    for (; j < b->n; ++j) {
      uint64_t t = ai * b->d[j] + out.d[i + j] + carry;
      out.d[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    out.d[i + b->n] = (uint32_t)carry;
  }
  out.n = a->n + b->n;
  bn_trim(&out);
  *r = out;
  return 1;
}

static uint32_t bn_mul_small_add(Big *a, uint32_t m, uint32_t add) {
  uint64_t carry = add;
  for (int i = 0; i < a->n; ++i) {
    uint64_t t = (uint64_t)a->d[i] * m + carry;
    a->d[i] = (uint32_t)t;
    carry = t >> 32;
  }
  if (carry && a->n < BN_LIMBS) {
    a->d[a->n++] = (uint32_t)carry;
    carry = 0;
  }
  return (uint32_t)carry;
}

static uint32_t bn_div_small(Big *a, uint32_t d) {
  uint64_t rem = 0;
  for (int i = a->n - 1; i >= 0; --i) {
    uint64_t cur = (rem << 32) | a->d[i];
    a->d[i] = (uint32_t)(cur / d);
    rem = cur % d;
  }
  bn_trim(a);
  return (uint32_t)rem;
}

static int leading_zeros(uint32_t x) {
  int n = 0;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}

/* Knuth algorithm D: q = u / v, r = u % v. v must be non-zero. */
static void bn_divmod(const Big *u, const Big *v, Big *q, Big *r) {
  Big quo, rem;
  memset(quo.d, 0, sizeof quo.d);
  if (bn_cmp(u, v) < 0) {
    bn_set_u64(q, 0);
    *r = *u;
    return;
  }
  if (v->n == 1) {
    rem = *u;
    uint32_t small = bn_div_small(&rem, v->d[0]);
    *q = rem;
    bn_set_u64(r, small);
    return;
  }
  int n = v->n, m = u->n - v->n, s = leading_zeros(v->d[n - 1]);
  uint32_t vn[BN_LIMBS], un[BN_LIMBS + 1];
  for (int i = n - 1; i > 0; --i) vn[i] = (v->d[i] << s) | (s ? v->d[i - 1] >> (32 - s) : 0u);
  vn[0] = v->d[0] << s;
  un[u->n] = s ? u->d[u->n - 1] >> (32 - s) : 0u;
  for (int i = u->n - 1; i > 0; --i) un[i] = (u->d[i] << s) | (s ? u->d[i - 1] >> (32 - s) : 0u);
  un[0] = u->d[0] << s;
  for (int j = m; j >= 0; --j) {
    uint64_t num = ((uint64_t)un[j + n] << 32) | un[j + n - 1];
    uint64_t qhat = num / vn[n - 1], rhat = num % vn[n - 1];
    while (qhat >> 32 || qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
      --qhat;
      rhat += vn[n - 1];
      if (rhat >> 32) break;
    }
    uint64_t carry = 0;
    uint32_t borrow = 0;
    for (int i = 0; i < n; ++i) {
      uint64_t p = qhat * vn[i] + carry;
      carry = p >> 32;
      uint32_t plo = (uint32_t)p, cur = un[i + j];
      un[i + j] = cur - plo - borrow;
      borrow = (cur < plo) || (cur - plo < borrow);
    }
    uint64_t top = un[j + n], sub = carry + borrow;
    un[j + n] = (uint32_t)(top - sub);
    if (top < sub) {
      --qhat;
      uint64_t c = 0;
      for (int i = 0; i < n; ++i) {
        uint64_t t = (uint64_t)un[i + j] + vn[i] + c;
        un[i + j] = (uint32_t)t;
        c = t >> 32;
      }
      un[j + n] = (uint32_t)(un[j + n] + c);
    }
    quo.d[j] = (uint32_t)qhat;
  }
  quo.n = m + 1;
  bn_trim(&quo);
  memset(rem.d, 0, sizeof rem.d);
  for (int i = 0; i < n; ++i) rem.d[i] = (un[i] >> s) | (s ? un[i + 1] << (32 - s) : 0u);
  rem.n = n;
  bn_trim(&rem);
  *q = quo;
  *r = rem;
}

static int bn_bit(const Big *a, int i) { return i / 32 < a->n ? (int)((a->d[i / 32] >> (i % 32)) & 1u) : 0; }

static int bn_modexp(Big *r, const Big *base, const Big *exp, const Big *mod) {
  Big acc, b, q, t;
  bn_set_u64(&acc, 1);
  bn_divmod(base, mod, &q, &b);
  for (int i = exp->n * 32 - 1; i >= 0; --i) {
    if (!bn_mul(&t, &acc, &acc)) return 0;
    bn_divmod(&t, mod, &q, &acc);
    if (bn_bit(exp, i)) {
      if (!bn_mul(&t, &acc, &b)) return 0;
      bn_divmod(&t, mod, &q, &acc);
    }
  }
  *r = acc;
  return 1;
}

static size_t bn_to_decimal(const Big *a, char *out, size_t cap) {
  char tmp[BN_LIMBS * 10 + 1];
  size_t len = 0;
  Big x = *a;
  if (x.n == 0) tmp[len++] = '0';
  while (x.n > 0) {
    uint32_t chunk = bn_div_small(&x, 1000000000u);
    for (int k = 0; k < 9 && (x.n > 0 || chunk); ++k) {
      tmp[len++] = (char)('0' + chunk % 10u);
      chunk /= 10u;
    }
  }
  if (len + 1 > cap) return 0;
  for (size_t i = 0; i < len; ++i) out[i] = tmp[len - 1 - i];
  out[len] = '\0';
  return len;
}

static int bn_from_decimal(Big *a, const char *s) {
  bn_set_u64(a, 0);
  if (!*s) return 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return 0;
    if (bn_mul_small_add(a, 10u, (uint32_t)(*s - '0'))) return 0;
  }
  return 1;
}

/* Writes n! in decimal; returns the number of digits or 0 if it does not fit. */
size_t bn_factorial_decimal(unsigned n, char *out, size_t cap) {
  Big acc;
  bn_set_u64(&acc, 1);
  for (unsigned k = 2; k <= n; ++k)
    if (bn_mul_small_add(&acc, k, 0)) return 0;
  return bn_to_decimal(&acc, out, cap);
}

/* Writes Fibonacci(n) in decimal; returns digits or 0 on overflow. */
size_t bn_fibonacci_decimal(unsigned n, char *out, size_t cap) {
  Big a, b, t;
  bn_set_u64(&a, 0);
  bn_set_u64(&b, 1);
  for (unsigned i = 0; i < n; ++i) {
    if (!bn_add(&t, &a, &b)) return 0;
    a = b;
    b = t;
  }
  return bn_to_decimal(&a, out, cap);
}

/* Checks Fermat's little theorem a^(p-1) = 1 mod p for p = 2^127 - 1 and the division identity
   (x*y)/y = x, (x*y+r) % y = r on decimal operands. Returns 1 if all hold, 0 otherwise. */
int bn_selfcheck(const char *x_dec, const char *y_dec, uint64_t a) {
  Big p, pm1, one, base, r, x, y, prod, q, rem, small;
  bn_set_u64(&p, 1);
  for (int i = 0; i < 127; ++i) bn_mul_small_add(&p, 2u, 0);
  bn_set_u64(&one, 1);
  bn_sub(&p, &p, &one);
  bn_sub(&pm1, &p, &one);
  bn_set_u64(&base, a ? a : 3u);
  if (!bn_modexp(&r, &base, &pm1, &p) || bn_cmp(&r, &one) != 0) return 0;
  if (!bn_from_decimal(&x, x_dec) || !bn_from_decimal(&y, y_dec) || y.n == 0) return 0;
  if (!bn_mul(&prod, &x, &y)) return 0;
  bn_set_u64(&small, 12345u);
  if (bn_cmp(&small, &y) >= 0) bn_set_u64(&small, 0);
  if (!bn_add(&prod, &prod, &small)) return 0;
  bn_divmod(&prod, &y, &q, &rem);
  return bn_cmp(&q, &x) == 0 && bn_cmp(&rem, &small) == 0;
}
