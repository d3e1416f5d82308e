// Polynomial algebra templates over checked rationals and doubles: arithmetic, division, gcd, Sturm root counting.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace poly {
namespace {

// Overflow-checked 64-bit rational; any overflow poisons the value instead of wrapping.
class Rational {
 public:
  Rational(std::int64_t n = 0, std::int64_t d = 1) : num_(n), den_(d) { normalize(); }
  std::int64_t num() const { return num_; }
  std::int64_t den() const { return den_; }
  bool bad() const { return bad_; }
  bool is_zero() const { return !bad_ && num_ == 0; }
  double to_double() const { return static_cast<double>(num_) / static_cast<double>(den_); }

  friend Rational operator+(const Rational &a, const Rational &b) {
    std::int64_t g = gcd(a.den_, b.den_);
    bool of = false;
    std::int64_t l = mul(a.num_, b.den_ / g, of), r = mul(b.num_, a.den_ / g, of);
    Rational out = make(add(l, r, of), mul(a.den_, b.den_ / g, of), of || a.bad_ || b.bad_);
    return out;
  }
  friend Rational operator-(const Rational &a) { return make(a.num_ == INT64_MIN ? 0 : -a.num_, a.den_, a.bad_ || a.num_ == INT64_MIN); }
  friend Rational operator-(const Rational &a, const Rational &b) { return a + (-b); }
  friend Rational operator*(const Rational &a, const Rational &b) {
    std::int64_t g1 = gcd(a.num_, b.den_), g2 = gcd(b.num_, a.den_);
    bool of = false;
    std::int64_t n = mul(a.num_ / g1, b.num_ / g2, of), d = mul(a.den_ / g2, b.den_ / g1, of);
    return make(n, d, of || a.bad_ || b.bad_);
  }
  friend Rational operator/(const Rational &a, const Rational &b) {
    if (b.num_ == 0) return make(0, 1, true);
    Rational inv = make(b.den_, b.num_, b.bad_);
    return a * inv;
  }

 private:
  static Rational make(std::int64_t n, std::int64_t d, bool bad) {
    Rational r(bad ? 0 : n, bad ? 1 : d);
    r.bad_ = bad;
    return r;
  }
  static std::int64_t gcd(std::int64_t a, std::int64_t b) {
    std::uint64_t x = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
    std::uint64_t y = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
    while (y) {
      std::uint64_t t = x % y;
      x = y;
      y = t;
    }
    return x == 0 || x > static_cast<std::uint64_t>(INT64_MAX) ? 1 : static_cast<std::int64_t>(x);
  }
  static std::int64_t mul(std::int64_t a, std::int64_t b, bool &of) {
    if (a == 0 || b == 0) return 0;
    if (a == INT64_MIN || b == INT64_MIN || std::llabs(a) > INT64_MAX / std::llabs(b)) {
      of = true;
      return 0;
    }
    return a * b;
  }
  static std::int64_t add(std::int64_t a, std::int64_t b, bool &of) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
      of = true;
      return 0;
    }
    return a + b;
  }
  void normalize() {
    if (den_ == 0 || den_ == INT64_MIN || num_ == INT64_MIN) {
      bad_ = true;
      num_ = 0;
      den_ = 1;
      return;
    }
    if (den_ < 0) {
      den_ = -den_;
      num_ = -num_;
    }
    std::int64_t g = gcd(num_, den_);
    num_ /= g;
    den_ /= g;
  }
  std::int64_t num_, den_;
  bool bad_ = false;
};

template <typename T>
bool is_zero(const T &x);
template <>
bool is_zero<Rational>(const Rational &x) {
  return x.is_zero();
}
template <>
bool is_zero<double>(const double &x) {
  return std::fabs(x) < 1e-12;
}

template <typename T>
class Poly {
 public:
  Poly() = default;
  explicit Poly(std::vector<T> c) : c_(std::move(c)) { trim(); }
  int degree() const { return static_cast<int>(c_.size()) - 1; }
  const T &lead() const { return c_.back(); }
  const T &operator[](std::size_t i) const { return c_[i]; }
  bool zero() const { return c_.empty(); }

  Poly operator+(const Poly &o) const {
    std::vector<T> r(std::max(c_.size(), o.c_.size()), T(0));
    for (std::size_t i = 0; i < c_.size(); ++i) r[i] = r[i] + c_[i];
    for (std::size_t i = 0; i < o.c_.size(); ++i) r[i] = r[i] + o.c_[i];
    return Poly(r);
  }
  Poly operator*(const Poly &o) const {
    if (zero() || o.zero()) return Poly();
    std::vector<T> r(c_.size() + o.c_.size() - 1, T(0));
    for (std::size_t i = 0; i < c_.size(); ++i)
      for (std::size_t j = 0; j < o.c_.size(); ++j) r[i + j] = r[i + j] + c_[i] * o.c_[j];
    return Poly(r);
  }
  Poly scale(const T &s) const {
    std::vector<T> r = c_;
    for (auto &x : r) x = x * s;
    return Poly(r);
  }
  Poly derivative() const {
    std::vector<T> r;
    for (std::size_t i = 1; i < c_.size(); ++i) r.push_back(c_[i] * T(static_cast<std::int64_t>(i)));
    return Poly(r);
  }
  // Long division: *this = q * d + rem.
  void divmod(const Poly &d, Poly &q, Poly &rem) const {
    std::vector<T> r = c_, qc(c_.size() >= d.c_.size() ? c_.size() - d.c_.size() + 1 : 1, T(0));
    for (int k = degree() - d.degree(); k >= 0; --k) {
      T f = r[static_cast<std::size_t>(k + d.degree())] / d.lead();
      qc[static_cast<std::size_t>(k)] = f;
      for (int j = 0; j <= d.degree(); ++j)
        r[static_cast<std::size_t>(k + j)] = r[static_cast<std::size_t>(k + j)] - f * d[static_cast<std::size_t>(j)];
    }
    r.resize(d.c_.size() > 1 ? d.c_.size() - 1 : 0);
    q = Poly(qc);
    rem = Poly(r);
  }
  T eval(const T &x) const {
    T acc(0);
    for (std::size_t i = c_.size(); i-- > 0;) acc = acc * x + c_[i];
    return acc;
  }

 private:
  void trim() {
    while (!c_.empty() && is_zero(c_.back())) c_.pop_back();
  }
  std::vector<T> c_;
};

template <typename T>
Poly<T> monic_gcd(Poly<T> a, Poly<T> b) {
  while (!b.zero()) {
    Poly<T> q, r;
    a.divmod(b, q, r);
    a = b;
    b = r;
  }
  return a.zero() ? a : a.scale(T(1) / a.lead());
}

// Sturm chain in doubles; counts distinct real roots in (lo, hi].
int sturm_count(const Poly<double> &p, double lo, double hi) {
  std::vector<Poly<double>> chain{p, p.derivative()};
  while (!chain.back().zero() && chain.back().degree() > 0) {
    Poly<double> q, r;
    chain[chain.size() - 2].divmod(chain.back(), q, r);
    if (r.zero()) break;
    chain.push_back(r.scale(-1.0));
  }
  auto changes = [&](double x) {
    int n = 0;
    double prev = 0;
    for (const auto &f : chain) {
      double v = f.eval(x);
      if (std::fabs(v) < 1e-12) continue;
      if (prev != 0 && (v > 0) != (prev > 0)) ++n;
      prev = v;
    }
    return n;
  };
  return changes(lo) - changes(hi);
}

Poly<double> to_double(const std::vector<std::int64_t> &coeffs) {
  std::vector<double> c;
  for (std::int64_t v : coeffs) c.push_back(static_cast<double>(v));
  return Poly<double>(c);
}

}  // namespace
}  // namespace poly

// Counts distinct real roots of the integer polynomial sum coeffs[i] x^i in (lo, hi] via Sturm.
extern "C" int poly_count_roots(const std::int64_t *coeffs, int n, double lo, double hi) {
  if (n <= 0 || n > 32 || !(lo < hi)) return -1;
  std::vector<std::int64_t> c(coeffs, coeffs + n);
  poly::Poly<double> p = poly::to_double(c);
  if (p.zero()) return -1;
  return poly::sturm_count(p, lo, hi);
}

// Expands prod (x - r_i) for integer roots, then recovers the multiplicity structure exactly: returns
// the degree of gcd(p, p') over the rationals (= sum of multiplicities minus distinct roots), or -1 on
// overflow. Also checks p(r_i) == 0 for every root.
extern "C" int poly_repeated_root_degree(const std::int64_t *roots, int k) {
  using poly::Poly;
  using poly::Rational;
  if (k <= 0 || k > 12) return -1;
  for (int i = 0; i < k; ++i)
    if (roots[i] < -1000000 || roots[i] > 1000000) return -1;
  Poly<Rational> p(std::vector<Rational>{Rational(1)});
  for (int i = 0; i < k; ++i) p = p * Poly<Rational>(std::vector<Rational>{Rational(-roots[i]), Rational(1)});
  for (int i = 0; i < k; ++i)
    if (!p.eval(Rational(roots[i])).is_zero()) return -1;
  Poly<Rational> g = poly::monic_gcd(p, p.derivative());
  for (int i = 0; i <= g.degree(); ++i)
    if (g[static_cast<std::size_t>(i)].bad()) return -1;
  return g.degree() < 0 ? 0 : g.degree();
}
