//===- mlgo/ir2vec/link_prediction.h - held-out link prediction --*- C++ -*-===//
///
/// \file
/// Measures how well a TransE model predicts triplets it was not trained on,
/// the standard knowledge-graph benchmark: for each test triplet (h, t, r),
/// every entity e is ranked as a tail by d(h, r, e) and as a head by
/// d(e, r, t) (smaller = more plausible). The rank of the true entity is
/// "filtered": candidates that form another known triplet are skipped, so a
/// model is not penalised for ranking other true facts first. Rank 1 is best.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_LINK_PREDICTION_H
#define MLGO_IR2VEC_LINK_PREDICTION_H

#include "mlgo/ir2vec/transe.h"
#include "mlgo/ir2vec/triplets.h"

#include <cstddef>
#include <vector>

namespace mlgo::ir2vec {

struct LinkPredictionMetrics {
  size_t queries = 0;  ///< two per test triplet (head and tail)
  double meanRank = 0; ///< average filtered rank (1 = perfect)
  double hitsAt10 = 0; ///< share of queries ranked in the top 10
  double meanReciprocalRank = 0;
};

/// Ranks every test triplet's head and tail among all entities of `model`.
/// `known` holds all true triplets (usually train + test) for filtering.
/// Preconditions: ids in range of the model.
LinkPredictionMetrics evaluateLinkPrediction(const TransEModel& model,
                                             const std::vector<Triplet>& test,
                                             const std::vector<Triplet>& known);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_LINK_PREDICTION_H
