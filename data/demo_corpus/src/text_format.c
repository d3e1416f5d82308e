/* A printf-like formatter: flags, width, precision, length modifiers, integers, strings, fixed and exponent floats. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t cap;
  size_t len; /* logical length, may exceed cap */
} Sink;

typedef struct {
  int left, plus, space, zero, alt;
  int width;
  int precision; /* -1 if absent */
  int length;    /* 0 none, 1 l, 2 ll, 3 z */
  char conv;
} Spec;

static void sink_putc(Sink *s, char c) {
  if (s->len + 1 < s->cap) s->buf[s->len] = c;
  s->len++;
}

static void sink_repeat(Sink *s, char c, int n) {
  for (int i = 0; i < n; ++i) sink_putc(s, c);
}

static void sink_write(Sink *s, const char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) sink_putc(s, p[i]);
}

static void sink_finish(Sink *s) {
  if (s->cap) s->buf[s->len < s->cap ? s->len : s->cap - 1] = '\0';
}

static const char *parse_spec(const char *f, Spec *sp, va_list *ap) {
  memset(sp, 0, sizeof *sp);
  sp->precision = -1;
  for (;; ++f) {
    if (*f == '-') sp->left = 1;
    else if (*f == '+') sp->plus = 1;
    else if (*f == ' ') sp->space = 1;
    else if (*f == '0') sp->zero = 1;
    else if (*f == '#') sp->alt = 1;
    else break;
  }
  if (*f == '*') {
    sp->width = va_arg(*ap, int);
    if (sp->width < 0) {
      sp->left = 1;
      sp->width = sp->width == -2147483647 - 1 ? 0 : -sp->width;
    }
    ++f;
  } else {
    while (*f >= '0' && *f <= '9') {
      if (sp->width < 100000) sp->width = sp->width * 10 + (*f - '0');
      ++f;
    }
  }
  if (*f == '.') {
    ++f;
    sp->precision = 0;
    if (*f == '*') {
      sp->precision = va_arg(*ap, int);
      if (sp->precision < 0) sp->precision = -1;
      ++f;
    } else {
      while (*f >= '0' && *f <= '9') {
        if (sp->precision < 100000) sp->precision = sp->precision * 10 + (*f - '0');
        ++f;
      }
    }
  }
  if (*f == 'l') {
    sp->length = 1;
    if (*++f == 'l') {
      sp->length = 2;
      ++f;
    }
  } else if (*f == 'z') {
    sp->length = 3;
    ++f;
  }
  sp->conv = *f;
  return *f ? f + 1 : f;
}

static size_t utoa_base(uint64_t v, unsigned base, int upper, char *out) {
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char tmp[64];
  size_t n = 0;
  do {
    tmp[n++] = digits[v % base];
    v /= base;
  } while (v);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

/* Emits sign/prefix, zero or space padding and the digits according to spec. */
static void emit_number(Sink *s, const Spec *sp, const char *prefix, const char *digits, size_t ndigits) {
  size_t plen = strlen(prefix);
  int zeros = sp->precision > (int)ndigits ? sp->precision - (int)ndigits : 0;
  int body = (int)(plen + ndigits) + zeros;
  int pad = sp->width > body ? sp->width - body : 0;
  if (sp->zero && !sp->left && sp->precision < 0) {
    zeros += pad;
    pad = 0;
  }
  if (!sp->left) sink_repeat(s, ' ', pad);
  sink_write(s, prefix, plen);
  sink_repeat(s, '0', zeros);
  sink_write(s, digits, ndigits);
  if (sp->left) sink_repeat(s, ' ', pad);
}

static void format_integer(Sink *s, const Spec *sp, va_list *ap) {
  char digits[70];
  const char *prefix = "";
  uint64_t mag;
  int is_signed = sp->conv == 'd' || sp->conv == 'i';
  if (is_signed) {
    int64_t v = sp->length == 2 ? va_arg(*ap, long long) : sp->length == 1 ? va_arg(*ap, long)
              : sp->length == 3 ? (int64_t)va_arg(*ap, size_t) : va_arg(*ap, int);
    mag = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    prefix = v < 0 ? "-" : sp->plus ? "+" : sp->space ? " " : "";
  } else {
    mag = sp->length == 2 ? va_arg(*ap, unsigned long long) : sp->length == 1 ? va_arg(*ap, unsigned long)
        : sp->length == 3 ? va_arg(*ap, size_t) : va_arg(*ap, unsigned);
  }
  unsigned base = sp->conv == 'x' || sp->conv == 'X' ? 16u : sp->conv == 'o' ? 8u : 10u;
  if (sp->alt && mag) prefix = base == 16 ? (sp->conv == 'X' ? "0X" : "0x") : base == 8 ? "0" : prefix;
  size_t n = (sp->precision == 0 && mag == 0) ? 0 : utoa_base(mag, base, sp->conv == 'X', digits);
  emit_number(s, sp, prefix, digits, n);
}

/* Fixed or exponent notation by scaling; exact for the values typical in reports, rounding
   half-up on the last printed digit. */
static void format_float(Sink *s, const Spec *sp, double v) {
  char out[400];
  size_t n = 0;
  int prec = sp->precision < 0 ? 6 : sp->precision > 30 ? 30 : sp->precision;
  const char *prefix = v < 0 ? "-" : sp->plus ? "+" : sp->space ? " " : "";
  if (v != v) {
    emit_number(s, sp, "", "nan", 3);
    return;
  }
  if (v < 0) v = -v;
  if (v > 1e300) {
    emit_number(s, sp, prefix, "inf", 3);
    return;
  }
  int exp10 = 0;
  if (sp->conv == 'e' && v != 0) {
    while (v >= 10.0) {
      v /= 10.0;
      ++exp10;
    }
    while (v < 1.0) {
      v *= 10.0;
      --exp10;
    }
  }
  double scale = 1.0;
  for (int i = 0; i < prec; ++i) scale *= 10.0;
  double scaled = v * scale + 0.5;
  if (scaled >= 1.8e19) {
    emit_number(s, sp, prefix, "big", 3);
    return;
  }
  uint64_t whole = (uint64_t)scaled;
  uint64_t p10 = (uint64_t)scale;
  uint64_t ip = whole / p10, fp = whole % p10;
  if (sp->conv == 'e' && ip >= 10) {
    ip /= 10;
    ++exp10;
    fp /= 10;
  }
  n = utoa_base(ip, 10, 0, out);
  if (prec > 0 || sp->alt) out[n++] = '.';
  char frac[40];
  size_t fl = utoa_base(fp, 10, 0, frac);
  for (int i = (int)fl; i < prec; ++i) out[n++] = '0';
  if (prec > 0) {
    memcpy(out + n, frac, fl);
    n += fl;
  }
  if (sp->conv == 'e') {
    int e = exp10 < 0 ? -exp10 : exp10;
    out[n++] = 'e';
    out[n++] = exp10 < 0 ? '-' : '+';
    if (e < 10) out[n++] = '0';
    n += utoa_base((uint64_t)e, 10, 0, out + n);
  }
  Spec plain = *sp;
  plain.precision = -1;
  emit_number(s, &plain, prefix, out, n);
}

static void format_string(Sink *s, const Spec *sp, const char *str) {
  if (!str) str = "(null)";
  size_t n = strlen(str);
  if (sp->precision >= 0 && (size_t)sp->precision < n) n = (size_t)sp->precision;
  int pad = sp->width > (int)n ? sp->width - (int)n : 0;
  if (!sp->left) sink_repeat(s, ' ', pad);
  sink_write(s, str, n);
  if (sp->left) sink_repeat(s, ' ', pad);
}

static size_t vformat(char *buf, size_t cap, const char *fmt, va_list ap_in) {
  Sink s = {buf, cap, 0};
  va_list ap;
  va_copy(ap, ap_in);
  while (*fmt) {
    if (*fmt != '%') {
      sink_putc(&s, *fmt++);
      continue;
    }
    Spec sp;
    fmt = parse_spec(fmt + 1, &sp, &ap);
    switch (sp.conv) {
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': format_integer(&s, &sp, &ap); break;
      case 'f': case 'e': format_float(&s, &sp, va_arg(ap, double)); break;
      case 's': format_string(&s, &sp, va_arg(ap, const char *)); break;
      case 'c': {
        char c = (char)va_arg(ap, int);
        Spec one = sp;
        one.precision = 1;
        char tmp[2] = {c, '\0'};
        format_string(&s, &one, tmp);
        break;
      }
      case '%': sink_putc(&s, '%'); break;
      default: sink_putc(&s, '?'); break;
    }
  }
  va_end(ap);
  sink_finish(&s);
  return s.len;
}

/* Formats into buf like snprintf; returns the length the full output would have. */
size_t tf_format(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = vformat(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}

/* Compares tf_format with the C library's snprintf for a table of integer and string cases.
   Returns the number of mismatching cases (0 means all agree). */
int tf_selftest(void) {
  char a[128], b[128];
  int bad = 0;
  static const long long values[] = {0, 1, -1, 42, -42, 1234567, -98765432, 2147483647LL, -2147483647LL - 1,
                                     9007199254740993LL};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
    long long v = values[i];
    tf_format(a, sizeof a, "[%lld|%+8lld|%-8lld|%08lld|% lld|%.3lld]", v, v, v, v, v, v);
    snprintf(b, sizeof b, "[%lld|%+8lld|%-8lld|%08lld|% lld|%.3lld]", v, v, v, v, v, v);
    bad += strcmp(a, b) != 0;
    unsigned long long u = (unsigned long long)v;
    tf_format(a, sizeof a, "[%llx|%#llX|%llo|%#llo|%20llu]", u, u, u, u, u);
    snprintf(b, sizeof b, "[%llx|%#llX|%llo|%#llo|%20llu]", u, u, u, u, u);
    bad += strcmp(a, b) != 0;
    int w = (int)(i % 12) - 6;
    tf_format(a, sizeof a, "<%*s|%-6.2s|%c|%%|%*d>", w, "abc", "xyz", 'A' + (int)i, w, (int)i);
    snprintf(b, sizeof b, "<%*s|%-6.2s|%c|%%|%*d>", w, "abc", "xyz", 'A' + (int)i, w, (int)i);
    bad += strcmp(a, b) != 0;
    double d = (double)v / 64.0;
    tf_format(a, sizeof a, "%.3f|%10.2f|%.0f|%e", d, d, d, d);
    snprintf(b, sizeof b, "%.3f|%10.2f|%.0f|%e", d, d, d, d);
    bad += strcmp(a, b) != 0;
  }
  return bad;
}
