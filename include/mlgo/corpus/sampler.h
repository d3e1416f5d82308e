//===- mlgo/corpus/sampler.h - choosing modules to train on -----*- C++ -*-===//
///
/// \file
/// Samplers pick corpus modules (as indices into `Corpus::modules()`), with
/// the strategies ml-compiler-opt uses. All are deterministic: the same
/// module sizes, kind, seed and call sequence give the same indices on every
/// platform (the generator is std::mt19937_64 with our own bounded draws, not
/// the implementation-defined std distributions).
///
/// A Sampler is not thread-safe; callers serialise access.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_SAMPLER_H
#define MLGO_CORPUS_SAMPLER_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

class Corpus;

enum class SamplerKind {
  /// Each draw is uniform over all modules, independent of earlier draws.
  kUniform,
  /// Draws visit every module once per epoch, in a seeded shuffled order; when
  /// all have been drawn a new epoch starts with a fresh shuffle.
  kWithoutReplacement,
  /// ml-compiler-opt's default: modules sorted by bitcode size (largest first,
  /// ties by index) are split into `buckets` contiguous buckets of near-equal
  /// length; draws visit buckets round robin (0, 1, ..., buckets-1, 0, ...)
  /// and pick uniformly within the bucket. So a batch of `buckets` draws has
  /// one module from every size stratum.
  kBucketRoundRobin,
};

/// "uniform", "without-replacement" or "round-robin" (kInvalidArgument
/// listing the valid names otherwise).
Result<SamplerKind> parseSamplerKind(std::string_view name);
std::string_view samplerKindName(SamplerKind kind);

struct SamplerOptions {
  SamplerKind kind = SamplerKind::kBucketRoundRobin;
  std::uint64_t seed = 0;
  /// Number of size buckets for kBucketRoundRobin (clamped to the number of
  /// modules); ignored by the other kinds. Must be >= 1.
  std::size_t buckets = 20;
};

class Sampler {
public:
  /// A sampler over modules with the given bitcode sizes (index i = module i).
  /// kInvalidArgument if `moduleSizes` is empty or `buckets` is 0.
  static Result<std::unique_ptr<Sampler>> create(std::vector<std::uint64_t> moduleSizes,
                                                 const SamplerOptions& options);
  /// Convenience: a sampler over `corpus.modules()` by `bitcodeSize`.
  static Result<std::unique_ptr<Sampler>> create(const Corpus& corpus,
                                                 const SamplerOptions& options);

  virtual ~Sampler() = default;

  /// The next module index, in [0, size()).
  virtual std::size_t next() = 0;

  /// `k` successive draws (same as calling next() k times).
  std::vector<std::size_t> sample(std::size_t k);

  /// Restarts the sequence as if freshly created with the same options.
  virtual void reset() = 0;

  /// Number of modules sampled over.
  virtual std::size_t size() const = 0;

protected:
  Sampler() = default;
};

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_SAMPLER_H
