//===- corpus/sampler.cc - choosing modules to train on -------------------===//
#include "mlgo/corpus/sampler.h"

#include "mlgo/corpus/corpus.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace mlgo::corpus {

namespace {

/// Uniform integer in [0, bound) from a 64-bit generator, by rejection
/// (unbiased and identical on every standard library).
std::size_t drawBelow(std::mt19937_64& rng, std::size_t bound) {
  const std::uint64_t range = bound;
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t value;
  do {
    value = rng();
  } while (value >= limit);
  return static_cast<std::size_t>(value % range);
}

class UniformSampler final : public Sampler {
public:
  UniformSampler(std::size_t size, std::uint64_t seed) : size_(size), seed_(seed), rng_(seed) {}
  std::size_t next() override { return drawBelow(rng_, size_); }
  void reset() override { rng_.seed(seed_); }
  std::size_t size() const override { return size_; }

private:
  std::size_t size_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
};

class WithoutReplacementSampler final : public Sampler {
public:
  WithoutReplacementSampler(std::size_t size, std::uint64_t seed)
      : order_(size), seed_(seed), rng_(seed) {
    reset();
  }
  std::size_t next() override {
    if (cursor_ == order_.size())
      shuffle();
    return order_[cursor_++];
  }
  void reset() override {
    rng_.seed(seed_);
    shuffle();
  }
  std::size_t size() const override { return order_.size(); }

private:
  void shuffle() {
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    for (std::size_t i = order_.size(); i > 1; --i)
      std::swap(order_[i - 1], order_[drawBelow(rng_, i)]);
    cursor_ = 0;
  }

  std::vector<std::size_t> order_;
  std::size_t cursor_ = 0;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
};

class BucketRoundRobinSampler final : public Sampler {
public:
  BucketRoundRobinSampler(const std::vector<std::uint64_t>& sizes, std::size_t buckets,
                          std::uint64_t seed)
      : bySize_(sizes.size()), seed_(seed), rng_(seed) {
    std::iota(bySize_.begin(), bySize_.end(), std::size_t{0});
    // Largest first; equal sizes keep index order (a total order, so plain
    // sort is deterministic).
    std::sort(bySize_.begin(), bySize_.end(), [&sizes](std::size_t a, std::size_t b) {
      return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : a < b;
    });
    buckets = std::min(buckets, sizes.size());
    // Bucket b covers [floor(b*n/B), floor((b+1)*n/B)): near-equal, never empty.
    for (std::size_t b = 0; b <= buckets; ++b)
      bounds_.push_back(b * sizes.size() / buckets);
  }
  std::size_t next() override {
    std::size_t begin = bounds_[bucket_];
    std::size_t end = bounds_[bucket_ + 1];
    bucket_ = (bucket_ + 1) % (bounds_.size() - 1);
    return bySize_[begin + drawBelow(rng_, end - begin)];
  }
  void reset() override {
    rng_.seed(seed_);
    bucket_ = 0;
  }
  std::size_t size() const override { return bySize_.size(); }

private:
  std::vector<std::size_t> bySize_; ///< module indices, largest bitcode first
  std::vector<std::size_t> bounds_; ///< bucket boundaries into bySize_
  std::size_t bucket_ = 0;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
};

} // namespace

Result<SamplerKind> parseSamplerKind(std::string_view name) {
  for (SamplerKind kind :
       {SamplerKind::kUniform, SamplerKind::kWithoutReplacement, SamplerKind::kBucketRoundRobin})
    if (samplerKindName(kind) == name)
      return kind;
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown sampler '{}' (expected uniform, without-replacement or round-robin)",
                   name);
}

std::string_view samplerKindName(SamplerKind kind) {
  switch (kind) {
  case SamplerKind::kUniform:
    return "uniform";
  case SamplerKind::kWithoutReplacement:
    return "without-replacement";
  case SamplerKind::kBucketRoundRobin:
    return "round-robin";
  }
  return "unknown";
}

Result<std::unique_ptr<Sampler>> Sampler::create(std::vector<std::uint64_t> moduleSizes,
                                                 const SamplerOptions& options) {
  if (moduleSizes.empty())
    return makeError(ErrorCode::kInvalidArgument, "cannot sample from an empty set of modules");
  std::unique_ptr<Sampler> sampler;
  switch (options.kind) {
  case SamplerKind::kUniform:
    sampler = std::make_unique<UniformSampler>(moduleSizes.size(), options.seed);
    break;
  case SamplerKind::kWithoutReplacement:
    sampler = std::make_unique<WithoutReplacementSampler>(moduleSizes.size(), options.seed);
    break;
  case SamplerKind::kBucketRoundRobin:
    if (options.buckets == 0)
      return makeError(ErrorCode::kInvalidArgument, "the round-robin sampler needs >= 1 bucket");
    sampler = std::make_unique<BucketRoundRobinSampler>(moduleSizes, options.buckets, options.seed);
    break;
  }
  if (!sampler)
    return makeError(ErrorCode::kInvalidArgument, "unknown sampler kind");
  return sampler;
}

Result<std::unique_ptr<Sampler>> Sampler::create(const Corpus& corpus,
                                                 const SamplerOptions& options) {
  std::vector<std::uint64_t> sizes;
  sizes.reserve(corpus.modules().size());
  for (const ModuleSpec& module : corpus.modules())
    sizes.push_back(module.bitcodeSize);
  return create(std::move(sizes), options);
}

std::vector<std::size_t> Sampler::sample(std::size_t k) {
  std::vector<std::size_t> indices;
  indices.reserve(k);
  for (std::size_t i = 0; i < k; ++i)
    indices.push_back(next());
  return indices;
}

} // namespace mlgo::corpus
