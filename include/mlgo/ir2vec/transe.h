//===- mlgo/ir2vec/transe.h - TransE vocabulary trainer ---------*- C++ -*-===//
///
/// \file
/// Learns entity vectors from triplets with TransE (Bordes et al., 2013), the
/// model IR2Vec's vocabularies are trained with: a triplet (h, t, r) should
/// satisfy h + r ~ t, measured by the L1 distance d(h, r, t) = |h + r - t|_1.
///
/// Training minimises the margin ranking loss
///     sum over (h,t,r) of max(0, margin + d(h, r, t) - d(h', r, t'))
/// where (h', t', r) is a negative sample: the head or the tail replaced by a
/// uniformly drawn other entity (which one: with the "bern" rule, the head
/// with probability tails-per-head / (tails-per-head + heads-per-tail) of r,
/// else 50/50), redrawn up to 16 times while the corruption is itself a
/// training triplet. Parameters start uniform in [-6/sqrt(dim), 6/sqrt(dim)],
/// relations are L2-normalised once, entity vectors are L2-normalised before
/// every mini-batch and at the end. Plain SGD on the L1 sub-gradient.
///
/// Determinism and threads: each epoch shuffles the triplets with a generator
/// seeded by (seed, epoch); the negative sample of a triplet depends only on
/// (seed, epoch, position). Within a mini-batch the hinge terms are evaluated
/// by sample (split among threads), then the updates are applied by
/// dimension (each thread owns a slice of every vector and applies the
/// batch's updates in sample order). The result is therefore bit-identical
/// for a given seed whatever the number of threads.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_TRANSE_H
#define MLGO_IR2VEC_TRANSE_H

#include "mlgo/ir2vec/triplets.h"
#include "mlgo/ir2vec/vocabulary.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace mlgo::ir2vec {

/// Progress after one epoch.
struct EpochReport {
  unsigned epoch = 0;           ///< 1-based
  unsigned epochs = 0;          ///< total
  double loss = 0;              ///< sum of the margin losses of the epoch's triplets
  double violatingFraction = 0; ///< share of triplets with a positive loss
  double seconds = 0;           ///< wall time of this epoch
};

struct TransEConfig {
  unsigned dimension = 75;
  unsigned epochs = 1000;
  double margin = 3.0;
  double learningRate = 0.005;
  /// Mini-batches per epoch (OpenKE's "nbatches"); clamped to the triplet count.
  unsigned batchesPerEpoch = 100;
  uint64_t seed = 1;
  /// Worker threads; 0 = one per hardware thread.
  unsigned threads = 0;
  /// "bern" negative sampling (see above); false = head or tail 50/50.
  bool bernoulli = true;
  /// false keeps the entity vectors at their random start and trains only
  /// the relations: the "random vocabulary" baseline for link prediction.
  bool trainEntities = true;
  /// Called after every epoch from one of the training threads, never
  /// concurrently; exceptions it throws are ignored.
  std::function<void(const EpochReport&)> onEpoch;
};

/// Entity and relation vectors, row-major (id * dimension).
struct TransEModel {
  unsigned dimension = 0;
  size_t entityCount = 0;
  size_t relationCount = 0;
  std::vector<float> entities;
  std::vector<float> relations;

  std::span<const float> entity(size_t id) const {
    return {entities.data() + id * dimension, dimension};
  }
  std::span<const float> relation(size_t id) const {
    return {relations.data() + id * dimension, dimension};
  }
  /// |h + r - t|_1.
  double distance(size_t head, size_t relation, size_t tail) const;

  /// The entity vectors as a vocabulary (each float written in its shortest
  /// form). kInvalidArgument unless the entities are LLVM's (entities.h).
  Result<Vocabulary> toVocabulary(const std::vector<std::string>& entityNames) const;
};

/// The random starting point of training (as described above, entities
/// normalised).
TransEModel randomTransEModel(size_t entityCount, size_t relationCount, unsigned dimension,
                              uint64_t seed);

/// Trains on `data` (validated first). kInvalidArgument for an empty set, a
/// zero dimension/epoch count, or a non-positive margin or learning rate.
Result<TransEModel> trainTransE(const TripletSet& data, const TransEConfig& config);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_TRANSE_H
