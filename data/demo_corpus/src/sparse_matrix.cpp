// Sparse linear algebra: COO->CSR assembly, SpMV, transpose, and a Jacobi-preconditioned conjugate gradient.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace sparse {
namespace {

template <typename T>
struct Triplet {
  int row, col;
  T value;
};

template <typename T>
class Csr {
 public:
  Csr() = default;
  static Csr from_triplets(int rows, int cols, std::vector<Triplet<T>> trips) {
    std::sort(trips.begin(), trips.end(), [](const Triplet<T> &a, const Triplet<T> &b) {
      return a.row != b.row ? a.row < b.row : a.col < b.col;
    });
    Csr m;
    m.rows_ = rows;
    m.cols_ = cols;
    m.offsets_.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (std::size_t i = 0; i < trips.size(); ++i) {
      if (!m.cols_idx_.empty() && i > 0 && trips[i].row == trips[i - 1].row && trips[i].col == trips[i - 1].col) {
        m.values_.back() += trips[i].value;  // merge duplicates
        continue;
      }
      m.cols_idx_.push_back(trips[i].col);
      m.values_.push_back(trips[i].value);
      m.offsets_[static_cast<std::size_t>(trips[i].row) + 1]++;
    }
    std::partial_sum(m.offsets_.begin(), m.offsets_.end(), m.offsets_.begin());
    return m;
  }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t nnz() const { return values_.size(); }

  void multiply(const std::vector<T> &x, std::vector<T> &y) const {
    y.assign(static_cast<std::size_t>(rows_), T{});
    for (int r = 0; r < rows_; ++r) {
      std::size_t k = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(r)]);
      std::size_t end = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(r) + 1]);
      T s0{}, s1{};
      for (; k + 2 <= end; k += 2) {
        s0 += values_[k] * x[static_cast<std::size_t>(cols_idx_[k])];
        s1 += values_[k + 1] * x[static_cast<std::size_t>(cols_idx_[k + 1])];
      }
      if (k < end) s0 += values_[k] * x[static_cast<std::size_t>(cols_idx_[k])];
      y[static_cast<std::size_t>(r)] = s0 + s1;
    }
  }

  Csr transpose() const {
    std::vector<Triplet<T>> trips;
    trips.reserve(values_.size());
    for (int r = 0; r < rows_; ++r)
      for (int k = offsets_[static_cast<std::size_t>(r)]; k < offsets_[static_cast<std::size_t>(r) + 1]; ++k)
        trips.push_back({cols_idx_[static_cast<std::size_t>(k)], r, values_[static_cast<std::size_t>(k)]});
    return from_triplets(cols_, rows_, std::move(trips));
  }

  std::vector<T> diagonal() const {
    std::vector<T> d(static_cast<std::size_t>(std::min(rows_, cols_)), T{});
    for (int r = 0; r < rows_ && r < cols_; ++r)
      for (int k = offsets_[static_cast<std::size_t>(r)]; k < offsets_[static_cast<std::size_t>(r) + 1]; ++k)
        if (cols_idx_[static_cast<std::size_t>(k)] == r) d[static_cast<std::size_t>(r)] = values_[static_cast<std::size_t>(k)];
    return d;
  }

  bool equals(const Csr &o, T tol) const {
    if (rows_ != o.rows_ || cols_ != o.cols_ || offsets_ != o.offsets_ || cols_idx_ != o.cols_idx_) return false;
    for (std::size_t i = 0; i < values_.size(); ++i)
      if (std::fabs(values_[i] - o.values_[i]) > tol) return false;
    return true;
  }

 private:
  int rows_ = 0, cols_ = 0;
  std::vector<int> offsets_;
  std::vector<int> cols_idx_;
  std::vector<T> values_;
};

template <typename T>
T dot(const std::vector<T> &a, const std::vector<T> &b) {
  T s0{}, s1{}, s2{}, s3{};
  std::size_t i = 0, n = a.size();
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

template <typename T>
void axpy(T alpha, const std::vector<T> &x, std::vector<T> &y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] += alpha * x[i];
}

// 5-point Laplacian on an n x n grid with Dirichlet boundary plus a small shift (SPD).
template <typename T>
Csr<T> laplacian(int n, T shift, bool with_duplicates) {
  std::vector<Triplet<T>> trips;
  auto id = [n](int x, int y) { return y * n + x; };
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      int me = id(x, y);
      if (with_duplicates) {
        trips.push_back({me, me, T(2) + shift / 2});
        trips.push_back({me, me, T(2) + shift / 2});
      } else {
        trips.push_back({me, me, T(4) + shift});
      }
      if (x > 0) trips.push_back({me, id(x - 1, y), T(-1)});
      if (x + 1 < n) trips.push_back({me, id(x + 1, y), T(-1)});
      if (y > 0) trips.push_back({me, id(x, y - 1), T(-1)});
      if (y + 1 < n) trips.push_back({me, id(x, y + 1), T(-1)});
    }
  return Csr<T>::from_triplets(n * n, n * n, std::move(trips));
}

template <typename T>
int conjugate_gradient(const Csr<T> &a, const std::vector<T> &b, std::vector<T> &x, T tol, int max_iter, bool precondition) {
  std::size_t n = b.size();
  std::vector<T> r = b, z(n), p(n), ap(n), inv_diag = a.diagonal();
  for (auto &d : inv_diag) d = d != T{} ? T(1) / d : T(1);
  x.assign(n, T{});
  auto apply_precond = [&]() {
    for (std::size_t i = 0; i < n; ++i) z[i] = precondition ? r[i] * inv_diag[i] : r[i];
  };
  apply_precond();
  p = z;
  T rz = dot(r, z), bnorm = std::sqrt(dot(b, b));
  if (bnorm == T{}) return 0;
  for (int it = 1; it <= max_iter; ++it) {
    a.multiply(p, ap);
    T alpha = rz / dot(p, ap);
    axpy(alpha, p, x);
    axpy(-alpha, ap, r);
    if (std::sqrt(dot(r, r)) / bnorm < tol) return it;
    apply_precond();
    T rz_next = dot(r, z);
    T beta = rz_next / rz;
    rz = rz_next;
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  return -1;
}

}  // namespace
}  // namespace sparse

// Solves the shifted 2D Poisson system on an n x n grid by CG (preconditioned if asked); returns the
// true relative residual |b - Ax|/|b| and the iteration count in *iters (-1 if it did not converge).
extern "C" double sparse_cg_solve(int n, double tol, int precondition, int *iters) {
  if (n < 2 || n > 512) return -1;
  sparse::Csr<double> a = sparse::laplacian<double>(n, 0.01, false);
  std::vector<double> b(static_cast<std::size_t>(n) * static_cast<std::size_t>(n)), x, ax;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.1 * static_cast<double>(i)) + 1.0;
  *iters = sparse::conjugate_gradient(a, b, x, tol, 10 * n * n, precondition != 0);
  a.multiply(x, ax);
  for (std::size_t i = 0; i < ax.size(); ++i) ax[i] = b[i] - ax[i];
  return std::sqrt(sparse::dot(ax, ax) / sparse::dot(b, b));
}

// Checks CSR assembly: duplicate merging must equal direct assembly and the Laplacian must equal its
// transpose. Returns nnz on success, -1 otherwise. Uses float to instantiate a second precision.
extern "C" long sparse_assembly_check(int n) {
  if (n < 2 || n > 512) return -1;
  auto direct = sparse::laplacian<float>(n, 0.5f, false);
  auto merged = sparse::laplacian<float>(n, 0.5f, true);
  if (!direct.equals(merged, 1e-6f) || !direct.equals(direct.transpose(), 0.0f)) return -1;
  return static_cast<long>(direct.nnz());
}
