//===- ir2vec/triplet_index.h - triplet membership and statistics -*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: a hash set of triplets (to filter negative samples and
/// link-prediction candidates) and the per-relation statistics of the "bern"
/// negative sampling rule.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_TRIPLET_INDEX_H
#define MLGO_IR2VEC_TRIPLET_INDEX_H

#include "mlgo/ir2vec/triplets.h"

#include <unordered_set>
#include <vector>

namespace mlgo::ir2vec::detail {

/// Set of (head, tail, relation). Immutable after construction; safe to read
/// from many threads.
class TripletIndex {
public:
  TripletIndex() = default;
  explicit TripletIndex(const TripletSet& set) { add(set.triplets); }

  void add(const std::vector<Triplet>& triplets) {
    keys_.reserve(keys_.size() + triplets.size());
    for (const Triplet& t : triplets)
      keys_.insert(key(t));
  }
  bool contains(const Triplet& t) const { return keys_.count(key(t)) != 0; }

private:
  // The key keeps all 96 bits of the ids, so membership is exact.
  struct Key {
    uint64_t headTail;
    uint32_t relation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t x =
          k.headTail * 0x9e3779b97f4a7c15ULL ^ (uint64_t{k.relation} + 0x632be59bd9b4e019ULL);
      x ^= x >> 29;
      return static_cast<size_t>(x * 0xbf58476d1ce4e5b9ULL);
    }
  };
  static Key key(const Triplet& t) { return {(uint64_t{t.head} << 32) | t.tail, t.relation}; }
  std::unordered_set<Key, KeyHash> keys_;
};

/// Per relation, the probability of corrupting the head rather than the tail:
/// tph / (tph + hpt) with tph = average distinct tails per (head, relation)
/// and hpt = average distinct heads per (tail, relation) when `bernoulli`;
/// 0.5 otherwise (and for relations without triplets).
std::vector<double> headReplacementProbabilities(const TripletSet& set, bool bernoulli);

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_TRIPLET_INDEX_H
