//===- ir2vec/triplet_index.cc - triplet membership and statistics --------===//
#include "triplet_index.h"

#include <algorithm>

namespace mlgo::ir2vec::detail {

std::vector<double> headReplacementProbabilities(const TripletSet& set, bool bernoulli) {
  std::vector<double> probability(set.relations.size(), 0.5);
  if (!bernoulli)
    return probability;
  std::vector<Triplet> unique = set.triplets;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  size_t relations = set.relations.size();
  std::vector<size_t> count(relations, 0);
  std::vector<std::vector<uint32_t>> heads(relations), tails(relations);
  for (const Triplet& t : unique) {
    ++count[t.relation];
    heads[t.relation].push_back(t.head);
    tails[t.relation].push_back(t.tail);
  }
  auto distinct = [](std::vector<uint32_t>& ids) {
    std::sort(ids.begin(), ids.end());
    return static_cast<double>(std::unique(ids.begin(), ids.end()) - ids.begin());
  };
  for (size_t r = 0; r < relations; ++r) {
    if (count[r] == 0)
      continue;
    double tailsPerHead = static_cast<double>(count[r]) / distinct(heads[r]);
    double headsPerTail = static_cast<double>(count[r]) / distinct(tails[r]);
    probability[r] = tailsPerHead / (tailsPerHead + headsPerTail);
  }
  return probability;
}

} // namespace mlgo::ir2vec::detail
