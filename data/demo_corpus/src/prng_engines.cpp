// PRNG library: SplitMix64, xoshiro256**, PCG32 and MWC engines, distributions, an alias sampler and quality tests.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace prng {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t s_;
};

class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    SplitMix64 sm(seed);
    for (auto &w : s_) w = sm.next();
  }
  std::uint64_t next() {
    std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

class Pcg32 {
 public:
  explicit Pcg32(std::uint64_t seed, std::uint64_t stream = 54) : inc_((stream << 1) | 1u) {
    step();
    state_ += seed;
    step();
  }
  std::uint64_t next() {
    std::uint64_t hi = next32(), lo = next32();
    return (hi << 32) | lo;
  }
  std::uint32_t next32() {
    std::uint64_t old = state_;
    step();
    std::uint32_t xorshifted = static_cast<std::uint32_t>(((old >> 18) ^ old) >> 27);
    std::uint32_t rot = static_cast<std::uint32_t>(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
  }

 private:
  void step() { state_ = state_ * 6364136223846793005ull + inc_; }
  std::uint64_t state_ = 0;
  std::uint64_t inc_;
};

// Multiply-with-carry with lag 1: deliberately weaker, so the tests have something to rank.
class Mwc {
 public:
  explicit Mwc(std::uint64_t seed) : x_(static_cast<std::uint32_t>(seed) | 1u), c_(static_cast<std::uint32_t>(seed >> 32) % 4294967087u) {}
  std::uint64_t next() {
    std::uint64_t hi = next32(), lo = next32();
    return (hi << 32) | lo;
  }

 private:
  std::uint32_t next32() {
    std::uint64_t t = 4294957665ull * x_ + c_;
    x_ = static_cast<std::uint32_t>(t);
    c_ = static_cast<std::uint32_t>(t >> 32);
    return x_;
  }
  std::uint32_t x_, c_;
};

template <typename Engine>
std::uint64_t bounded(Engine &e, std::uint64_t bound) {
  if (bound > 0xffffffffull) {
    std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    for (;;) {
      std::uint64_t r = e.next();
      if (r < limit) return r % bound;
    }
  }
  // Multiply-shift with rejection of the biased low products (Lemire).
  std::uint32_t b = static_cast<std::uint32_t>(bound);
  std::uint64_t m = (e.next() >> 32) * b;
  std::uint32_t low = static_cast<std::uint32_t>(m);
  if (low < b) {
    std::uint32_t threshold = (0u - b) % b;
    while (low < threshold) {
      m = (e.next() >> 32) * b;
      low = static_cast<std::uint32_t>(m);
    }
  }
  return m >> 32;
}

template <typename Engine>
double uniform01(Engine &e) {
  return static_cast<double>(e.next() >> 11) * (1.0 / 9007199254740992.0);
}

template <typename Engine>
double normal(Engine &e) {
  for (;;) {
    double u = 2 * uniform01(e) - 1, v = 2 * uniform01(e) - 1;
    double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2 * std::log(s) / s);
  }
}

template <typename Engine>
int poisson(Engine &e, double mean) {
  double l = std::exp(-mean), p = 1;
  int k = 0;
  do {
    ++k;
    p *= uniform01(e);
  } while (p > l && k < 1000);
  return k - 1;
}

class AliasTable {
 public:
  explicit AliasTable(const std::vector<double> &weights) : prob_(weights.size()), alias_(weights.size()) {
    double total = 0;
    for (double w : weights) total += w;
    std::size_t n = weights.size();
    std::vector<double> scaled(n);
    std::vector<std::size_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(i);
    }
    while (!small.empty() && !large.empty()) {
      std::size_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (std::size_t i : large) prob_[i] = 1.0;
    for (std::size_t i : small) prob_[i] = 1.0;
  }
  template <typename Engine>
  std::size_t sample(Engine &e) const {
    std::size_t i = static_cast<std::size_t>(bounded(e, prob_.size()));
    return uniform01(e) < prob_[i] ? i : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<std::size_t> alias_;
};

template <typename Engine>
double chi_square_buckets(Engine &e, int buckets, long samples) {
  std::vector<long> counts(static_cast<std::size_t>(buckets), 0);
  for (long i = 0; i < samples; ++i) counts[static_cast<std::size_t>(bounded(e, static_cast<std::uint64_t>(buckets)))]++;
  double expected = static_cast<double>(samples) / buckets, chi = 0;
  for (long c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}

template <typename Engine>
double serial_correlation(Engine &e, long samples) {
  double sx = 0, sy = 0, sxy = 0, sxx = 0, syy = 0, prev = uniform01(e);
  for (long i = 0; i < samples; ++i) {
    double cur = uniform01(e);
    sx += prev;
    sy += cur;
    sxy += prev * cur;
    sxx += prev * prev;
    syy += cur * cur;
    prev = cur;
  }
  double n = static_cast<double>(samples);
  double num = n * sxy - sx * sy, den = std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
  return den > 0 ? num / den : 0;
}

template <typename Engine>
double run_suite(Engine e, long samples, double *corr) {
  *corr = serial_correlation(e, samples);
  return chi_square_buckets(e, 64, samples);
}

}  // namespace
}  // namespace prng

// Chi-square statistic (64 buckets, 63 d.o.f.) of the chosen engine: 0 splitmix, 1 xoshiro, 2 pcg,
// 3 mwc. The lag-1 serial correlation is written to *corr.
extern "C" double prng_chi_square(int engine, std::uint64_t seed, long samples, double *corr) {
  if (samples <= 0) return -1;
  switch (engine) {
    case 0: return prng::run_suite(prng::SplitMix64(seed), samples, corr);
    case 1: return prng::run_suite(prng::Xoshiro256(seed), samples, corr);
    case 2: return prng::run_suite(prng::Pcg32(seed), samples, corr);
    case 3: return prng::run_suite(prng::Mwc(seed), samples, corr);
    default: return -1;
  }
}

// Mean and variance of n normal deviates (Marsaglia polar) and of Poisson(mean) draws.
extern "C" void prng_moments(std::uint64_t seed, long n, double lambda, double out[4]) {
  prng::Xoshiro256 e(seed);
  double s1 = 0, s2 = 0, p1 = 0, p2 = 0;
  for (long i = 0; i < n; ++i) {
    double x = prng::normal(e);
    s1 += x;
    s2 += x * x;
    double k = prng::poisson(e, lambda);
    p1 += k;
    p2 += k * k;
  }
  double dn = n > 0 ? static_cast<double>(n) : 1.0;
  out[0] = s1 / dn;
  out[1] = s2 / dn - out[0] * out[0];
  out[2] = p1 / dn;
  out[3] = p2 / dn - out[2] * out[2];
}

// Samples a Zipf(s) distribution over k symbols through an alias table and returns the largest
// absolute deviation between observed and expected frequencies.
extern "C" double prng_alias_error(std::uint64_t seed, int k, double s, long samples) {
  if (k <= 0 || samples <= 0) return -1;
  std::vector<double> w(static_cast<std::size_t>(k));
  double total = 0;
  for (int i = 0; i < k; ++i) total += (w[static_cast<std::size_t>(i)] = 1.0 / std::pow(i + 1.0, s));
  prng::AliasTable table(w);
  prng::Pcg32 e(seed);
  std::vector<long> hits(w.size(), 0);
  for (long i = 0; i < samples; ++i) hits[table.sample(e)]++;
  double worst = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(hits[i]) / samples - w[i] / total));
  return worst;
}
