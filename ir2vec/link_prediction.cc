//===- ir2vec/link_prediction.cc - held-out link prediction ---------------===//
#include "mlgo/ir2vec/link_prediction.h"

#include "triplet_index.h"

namespace mlgo::ir2vec {
namespace {

/// Filtered rank of the true entity when `replaceHead` chooses which side is
/// ranked.
size_t filteredRank(const TransEModel& model, const detail::TripletIndex& known,
                    const Triplet& truth, bool replaceHead) {
  double trueDistance = model.distance(truth.head, truth.relation, truth.tail);
  size_t rank = 1;
  for (uint32_t e = 0; e < model.entityCount; ++e) {
    Triplet candidate = truth;
    (replaceHead ? candidate.head : candidate.tail) = e;
    if (candidate == truth || known.contains(candidate))
      continue;
    if (model.distance(candidate.head, candidate.relation, candidate.tail) < trueDistance)
      ++rank;
  }
  return rank;
}

} // namespace

LinkPredictionMetrics evaluateLinkPrediction(const TransEModel& model,
                                             const std::vector<Triplet>& test,
                                             const std::vector<Triplet>& known) {
  detail::TripletIndex index;
  index.add(known);
  LinkPredictionMetrics metrics;
  double rankSum = 0, hits = 0, reciprocalSum = 0;
  for (const Triplet& truth : test) {
    for (bool replaceHead : {false, true}) {
      size_t rank = filteredRank(model, index, truth, replaceHead);
      ++metrics.queries;
      rankSum += static_cast<double>(rank);
      hits += rank <= 10 ? 1 : 0;
      reciprocalSum += 1.0 / static_cast<double>(rank);
    }
  }
  if (metrics.queries) {
    auto n = static_cast<double>(metrics.queries);
    metrics.meanRank = rankSum / n;
    metrics.hitsAt10 = hits / n;
    metrics.meanReciprocalRank = reciprocalSum / n;
  }
  return metrics;
}

} // namespace mlgo::ir2vec
