/* Proleptic Gregorian date/time library: civil<->day conversion, ISO-8601 parse/format, ISO weeks, business days. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  int year, month, day;
  int hour, minute, second;
  int offset_minutes; /* east of UTC */
} DateTime;

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

static int floor_div(int64_t a, int b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return (int)q;
}

/* Days since 1970-01-01 for a civil date, using 400-year eras starting in March. */
static int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  int era = floor_div(y, 400);
  int yoe = y - era * 400;
  int mp = (m + 9) % 12;
  int doy = (153 * mp + 2) / 5 + d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (int64_t)era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int doe = (int)(z - era * 146097);
  int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int)(yoe + era * 400) + (*m <= 2);
}

/* 0 = Monday ... 6 = Sunday */
static int weekday(int64_t days) {
  int64_t w = (days + 3) % 7;
  return (int)(w < 0 ? w + 7 : w);
}

static int valid_date(int y, int m, int d) {
  return y >= -9999 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m);
}

static int read_digits(const char **p, int count, int *out) {
  int v = 0;
  for (int i = 0; i < count; ++i) {
    char c = (*p)[i];
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  *p += count;
  *out = v;
  return 1;
}

static int expect_char(const char **p, char c) {
  if (**p != c) return 0;
  ++*p;
  return 1;
}

/* Parses "YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM|-HH:MM]". */
static int parse_iso(const char *s, DateTime *dt) {
  memset(dt, 0, sizeof *dt);
  if (!read_digits(&s, 4, &dt->year) || !expect_char(&s, '-') || !read_digits(&s, 2, &dt->month) ||
      !expect_char(&s, '-') || !read_digits(&s, 2, &dt->day))
    return 0;
  if (!valid_date(dt->year, dt->month, dt->day)) return 0;
  if (*s == 'T' || *s == ' ') {
    ++s;
    if (!read_digits(&s, 2, &dt->hour) || !expect_char(&s, ':') || !read_digits(&s, 2, &dt->minute)) return 0;
    if (*s == ':' && (++s, !read_digits(&s, 2, &dt->second))) return 0;
    if (dt->hour > 23 || dt->minute > 59 || dt->second > 60) return 0;
  }
  if (*s == 'Z') {
    ++s;
  } else if (*s == '+' || *s == '-') {
    int sign = *s == '-' ? -1 : 1, oh, om;
    ++s;
    if (!read_digits(&s, 2, &oh) || !expect_char(&s, ':') || !read_digits(&s, 2, &om) || oh > 23 || om > 59)
      return 0;
    dt->offset_minutes = sign * (oh * 60 + om);
  }
  return *s == '\0';
}

static int64_t to_epoch(const DateTime *dt) {
  int64_t days = days_from_civil(dt->year, dt->month, dt->day);
  return days * 86400 + dt->hour * 3600 + dt->minute * 60 + dt->second - (int64_t)dt->offset_minutes * 60;
}

static void from_epoch(int64_t t, int offset_minutes, DateTime *dt) {
  t += (int64_t)offset_minutes * 60;
  int64_t days = t / 86400, rem = t % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  civil_from_days(days, &dt->year, &dt->month, &dt->day);
  dt->hour = (int)(rem / 3600);
  dt->minute = (int)(rem % 3600 / 60);
  dt->second = (int)(rem % 60);
  dt->offset_minutes = offset_minutes;
}

static int format_iso(const DateTime *dt, char *out, size_t cap) {
  int n;
  if (dt->offset_minutes == 0) {
    n = snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ", dt->year, dt->month, dt->day, dt->hour, dt->minute,
                 dt->second);
  } else {
    int off = dt->offset_minutes < 0 ? -dt->offset_minutes : dt->offset_minutes;
    n = snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", dt->year, dt->month, dt->day, dt->hour,
                 dt->minute, dt->second, dt->offset_minutes < 0 ? '-' : '+', off / 60, off % 60);
  }
  return n > 0 && (size_t)n < cap ? n : -1;
}

static void iso_week(int64_t days, int *iso_year, int *week) {
  int y, m, d;
  int64_t thursday = days - weekday(days) + 3;
  civil_from_days(thursday, &y, &m, &d);
  int64_t jan1 = days_from_civil(y, 1, 1);
  *iso_year = y;
  *week = (int)((thursday - jan1) / 7) + 1;
}

static void add_months(int *y, int *m, int *d, int months) {
  int total = *y * 12 + (*m - 1) + months;
  *y = floor_div(total, 12);
  *m = total - *y * 12 + 1;
  int dim = days_in_month(*y, *m);
  if (*d > dim) *d = dim;
}

/* Parses an ISO-8601 timestamp to Unix seconds; returns 0 on success, -1 if malformed. */
int dt_parse_epoch(const char *text, int64_t *epoch) {
  DateTime dt;
  if (!parse_iso(text, &dt)) return -1;
  *epoch = to_epoch(&dt);
  return 0;
}

/* Formats Unix seconds in the given UTC offset; returns length or -1. */
int dt_format_epoch(int64_t epoch, int offset_minutes, char *out, size_t cap) {
  DateTime dt;
  if (offset_minutes < -24 * 60 || offset_minutes > 24 * 60) return -1;
  if (epoch < -300000000000LL || epoch > 250000000000LL) return -1;
  from_epoch(epoch, offset_minutes, &dt);
  return format_iso(&dt, out, cap);
}

/* Counts Monday-Friday days in [start, end) (both ISO dates), skipping listed holidays.
   Returns -1 on a parse error. */
long dt_business_days(const char *start, const char *end, const char *const *holidays, int nholidays) {
  DateTime a, b;
  if (!parse_iso(start, &a) || !parse_iso(end, &b)) return -1;
  int64_t da = days_from_civil(a.year, a.month, a.day), db = days_from_civil(b.year, b.month, b.day);
  if (db < da) return 0;
  int64_t span = db - da, full_weeks = span / 7;
  long count = (long)(full_weeks * 5);
  for (int64_t day = da + full_weeks * 7; day < db; ++day)
    if (weekday(day) < 5) ++count;
  for (int i = 0; i < nholidays; ++i) {
    DateTime h;
    if (!parse_iso(holidays[i], &h)) return -1;
    int64_t dh = days_from_civil(h.year, h.month, h.day);
    if (dh >= da && dh < db && weekday(dh) < 5) --count;
  }
  return count;
}

/* Walks every day from year y0 to y1 checking the civil<->days round trip, weekday continuity
   and ISO week bounds; returns the number of ISO years with 53 weeks, or -1 on a failed check. */
int dt_calendar_selfcheck(int y0, int y1) {
  if (y0 < -4000 || y1 > 4000 || y1 < y0) return -1;
  int64_t first = days_from_civil(y0, 1, 1), last = days_from_civil(y1, 12, 31);
  int long_years = 0, prev_wd = weekday(first - 1);
  for (int64_t day = first; day <= last; ++day) {
    int y, m, d, iy, wk;
    civil_from_days(day, &y, &m, &d);
    if (!valid_date(y, m, d) || days_from_civil(y, m, d) != day) return -1;
    int wd = weekday(day);
    if (wd != (prev_wd + 1) % 7) return -1;
    prev_wd = wd;
    iso_week(day, &iy, &wk);
    if (wk < 1 || wk > 53) return -1;
    if (wk == 53 && wd == 3) ++long_years;
    int ay = y, am = m, ad = d;
    add_months(&ay, &am, &ad, 13);
    if (!valid_date(ay, am, ad) || (am != (m % 12) + 1)) return -1;
  }
  return long_years;
}
