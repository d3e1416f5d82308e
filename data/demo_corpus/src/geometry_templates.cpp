// Geometry templates: fixed-size vectors and matrices, homogeneous transforms, convex hull, polygons, closest pair.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace geo {
namespace {

template <typename T, std::size_t N>
struct Vec {
  std::array<T, N> v{};
  T &operator[](std::size_t i) { return v[i]; }
  const T &operator[](std::size_t i) const { return v[i]; }
  Vec operator+(const Vec &o) const {
    Vec r;
    for (std::size_t i = 0; i < N; ++i) r[i] = v[i] + o[i];
    return r;
  }
  Vec operator-(const Vec &o) const {
    Vec r;
    for (std::size_t i = 0; i < N; ++i) r[i] = v[i] - o[i];
    return r;
  }
  Vec operator*(T s) const {
    Vec r;
    for (std::size_t i = 0; i < N; ++i) r[i] = v[i] * s;
    return r;
  }
  T dot(const Vec &o) const {
    T s{};
    for (std::size_t i = 0; i < N; ++i) s += v[i] * o[i];
    return s;
  }
  T norm2() const { return dot(*this); }
};

template <typename T, std::size_t R, std::size_t C>
struct Mat {
  std::array<T, R * C> a{};
  T &operator()(std::size_t r, std::size_t c) { return a[r * C + c]; }
  const T &operator()(std::size_t r, std::size_t c) const { return a[r * C + c]; }
  static Mat identity() {
    Mat m;
    for (std::size_t i = 0; i < R && i < C; ++i) m(i, i) = T(1);
    return m;
  }
  template <std::size_t K>
  Mat<T, R, K> operator*(const Mat<T, C, K> &o) const {
    Mat<T, R, K> r;
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        T s{};
        for (std::size_t k = 0; k < C; ++k) s += (*this)(i, k) * o(k, j);
        r(i, j) = s;
      }
    return r;
  }
  Vec<T, R> operator*(const Vec<T, C> &x) const {
    Vec<T, R> r;
    for (std::size_t i = 0; i < R; ++i) {
      T s{};
      for (std::size_t k = 0; k < C; ++k) s += (*this)(i, k) * x[k];
      r[i] = s;
    }
    return r;
  }
};

// Gauss-Jordan inverse with partial pivoting; returns false for singular matrices.
template <typename T, std::size_t N>
bool invert(const Mat<T, N, N> &m, Mat<T, N, N> &out) {
  Mat<T, N, N> a = m;
  out = Mat<T, N, N>::identity();
  for (std::size_t col = 0; col < N; ++col) {
    std::size_t piv = col;
    for (std::size_t r = col + 1; r < N; ++r)
      if (std::fabs(a(r, col)) > std::fabs(a(piv, col))) piv = r;
    if (std::fabs(a(piv, col)) < T(1e-12)) return false;
    for (std::size_t c = 0; c < N; ++c) {
      std::swap(a(col, c), a(piv, c));
      std::swap(out(col, c), out(piv, c));
    }
    T inv = T(1) / a(col, col);
    for (std::size_t c = 0; c < N; ++c) {
      a(col, c) *= inv;
      out(col, c) *= inv;
    }
    for (std::size_t r = 0; r < N; ++r) {
      if (r == col) continue;
      T f = a(r, col);
      for (std::size_t c = 0; c < N; ++c) {
        a(r, c) -= f * a(col, c);
        out(r, c) -= f * out(col, c);
      }
    }
  }
  return true;
}

using Vec2 = Vec<double, 2>;
using Vec4 = Vec<double, 4>;
using Mat4 = Mat<double, 4, 4>;

Mat4 rotation_z(double angle) {
  Mat4 m = Mat4::identity();
  double c = std::cos(angle), s = std::sin(angle);
  m(0, 0) = c;
  m(0, 1) = -s;
  m(1, 0) = s;
  m(1, 1) = c;
  return m;
}

Mat4 translation(double x, double y, double z) {
  Mat4 m = Mat4::identity();
  m(0, 3) = x;
  m(1, 3) = y;
  m(2, 3) = z;
  return m;
}

Mat4 scaling(double s) {
  Mat4 m = Mat4::identity();
  m(0, 0) = m(1, 1) = m(2, 2) = s;
  return m;
}

double cross(const Vec2 &o, const Vec2 &a, const Vec2 &b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

bool lex_less(const Vec2 &a, const Vec2 &b) { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]); }

// Andrew's monotone chain; returns the hull counter-clockwise without collinear points.
std::vector<Vec2> convex_hull(std::vector<Vec2> pts) {
  std::sort(pts.begin(), pts.end(), lex_less);
  pts.erase(std::unique(pts.begin(), pts.end(), [](const Vec2 &a, const Vec2 &b) { return a[0] == b[0] && a[1] == b[1]; }),
            pts.end());
  if (pts.size() < 3) return pts;
  std::vector<Vec2> hull(2 * pts.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (std::size_t i = pts.size() - 1, t = k + 1; i > 0; --i) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i - 1]) <= 0) --k;
    hull[k++] = pts[i - 1];
  }
  hull.resize(k - 1);
  return hull;
}

double polygon_area(const std::vector<Vec2> &poly) {
  double a = 0;
  for (std::size_t i = 0, n = poly.size(); i < n; ++i) {
    const Vec2 &p = poly[i], &q = poly[(i + 1) % n];
    a += p[0] * q[1] - q[0] * p[1];
  }
  return 0.5 * a;
}

bool point_in_polygon(const std::vector<Vec2> &poly, const Vec2 &p) {
  bool inside = false;
  for (std::size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    const Vec2 &a = poly[i], &b = poly[j];
    if ((a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0])
      inside = !inside;
  }
  return inside;
}

double closest_rec(std::vector<Vec2> &by_x, std::size_t lo, std::size_t hi, std::vector<Vec2> &scratch) {
  if (hi - lo <= 3) {
    double best = 1e300;
    for (std::size_t i = lo; i < hi; ++i)
      for (std::size_t j = i + 1; j < hi; ++j) best = std::min(best, (by_x[i] - by_x[j]).norm2());
    std::sort(by_x.begin() + static_cast<std::ptrdiff_t>(lo), by_x.begin() + static_cast<std::ptrdiff_t>(hi),
              [](const Vec2 &a, const Vec2 &b) { return a[1] < b[1]; });
    return best;
  }
  std::size_t mid = (lo + hi) / 2;
  double midx = by_x[mid][0];
  double d = std::min(closest_rec(by_x, lo, mid, scratch), closest_rec(by_x, mid, hi, scratch));
  std::merge(by_x.begin() + static_cast<std::ptrdiff_t>(lo), by_x.begin() + static_cast<std::ptrdiff_t>(mid),
             by_x.begin() + static_cast<std::ptrdiff_t>(mid), by_x.begin() + static_cast<std::ptrdiff_t>(hi),
             scratch.begin(), [](const Vec2 &a, const Vec2 &b) { return a[1] < b[1]; });
  std::copy(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(hi - lo),
            by_x.begin() + static_cast<std::ptrdiff_t>(lo));
  std::size_t strip = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    double dx = by_x[i][0] - midx;
    if (dx * dx >= d) continue;
    for (std::size_t j = strip; j-- > 0;) {
      double dy = by_x[i][1] - scratch[j][1];
      if (dy * dy >= d) break;
      d = std::min(d, (by_x[i] - scratch[j]).norm2());
    }
    scratch[strip++] = by_x[i];
  }
  return d;
}

std::vector<Vec2> random_points(std::uint64_t seed, int n) {
  std::vector<Vec2> pts(static_cast<std::size_t>(n));
  std::uint64_t s = seed | 1u;
  for (auto &p : pts) {
    for (int k = 0; k < 2; ++k) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      p[static_cast<std::size_t>(k)] = static_cast<double>(s >> 40) / 16777216.0 * 100.0;
    }
  }
  return pts;
}

}  // namespace
}  // namespace geo

// Convex hull of n random points: returns hull area, writes hull size and how many of the
// original points the crossing-number point-in-polygon test reports as inside.
extern "C" double geo_hull_stats(std::uint64_t seed, int n, int *hull_size, int *inside) {
  if (n <= 0) return 0;
  std::vector<geo::Vec2> pts = geo::random_points(seed, n);
  std::vector<geo::Vec2> hull = geo::convex_hull(pts);
  *hull_size = static_cast<int>(hull.size());
  int count = 0;
  if (hull.size() >= 3)
    for (const auto &p : pts) count += geo::point_in_polygon(hull, p) ? 1 : 0;
  *inside = count;
  return geo::polygon_area(hull);
}

// Distance of the closest pair among n random points, checked against brute force for n <= 400.
extern "C" double geo_closest_pair(std::uint64_t seed, int n, int *agrees) {
  if (n < 2) return -1;
  std::vector<geo::Vec2> pts = geo::random_points(seed, n);
  std::vector<geo::Vec2> sorted = pts, scratch(pts.size());
  std::sort(sorted.begin(), sorted.end(), geo::lex_less);
  double d = std::sqrt(geo::closest_rec(sorted, 0, sorted.size(), scratch));
  *agrees = 1;
  if (n <= 400) {
    double best = 1e300;
    for (std::size_t i = 0; i < pts.size(); ++i)
      for (std::size_t j = i + 1; j < pts.size(); ++j) best = std::min(best, (pts[i] - pts[j]).norm2());
    *agrees = std::fabs(std::sqrt(best) - d) < 1e-12 ? 1 : 0;
  }
  return d;
}

// Composes rotate/scale/translate transforms, applies them and their inverse to a point cloud and
// returns the worst round-trip error.
extern "C" double geo_transform_roundtrip(std::uint64_t seed, int n, double angle) {
  geo::Mat4 m = geo::translation(3, -2, 1) * geo::rotation_z(angle) * geo::scaling(1.5);
  geo::Mat4 inv;
  if (!geo::invert(m, inv)) return -1;
  std::vector<geo::Vec2> pts = geo::random_points(seed, n > 0 ? n : 1);
  double worst = 0;
  for (const auto &p : pts) {
    geo::Vec4 h;
    h[0] = p[0];
    h[1] = p[1];
    h[2] = 0.5;
    h[3] = 1.0;
    geo::Vec4 back = inv * (m * h);
    worst = std::max(worst, (back - h).norm2());
  }
  return std::sqrt(worst);
}
