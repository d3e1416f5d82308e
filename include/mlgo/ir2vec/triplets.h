//===- mlgo/ir2vec/triplets.h - knowledge-graph triplets --------*- C++ -*-===//
///
/// \file
/// The training data of an IR2Vec vocabulary: (head, tail, relation)
/// triplets over the entities of entities.h, as LLVM's triplet generator
/// defines them. For every instruction I (debug intrinsics skipped), in
/// function and block order:
///   (opcode(I), canonical type of I, Type)
///   (opcode(previous instruction of the function), opcode(I), Next)
///   (opcode(I), kind of operand k, Arg<k>)       for each operand k
///   (opcode(I), predicate of I, Predicate)       for compares (mlgo-env's
///                                                 addition; LLVM 22 emits none,
///                                                 leaving predicates untrained)
///
/// Relation ids follow LLVM: 0 = Type, 1 = Next, 2 + k = Arg<k>; "Predicate",
/// when present, comes after the last Arg relation. A TripletSet carries its
/// entity and relation names, so files are self-describing.
///
/// File format (text, UTF-8, `\n` line ends; fields separated by one tab):
///
///     # mlgo-env IR2Vec triplets
///     ENTITIES 110
///     Ret
///     Br
///     ...                       (one name per line; id = position)
///     RELATIONS 9
///     Type
///     Next
///     Arg0
///     ...
///     TRIPLETS 2
///     55	74	0               (head, tail, relation ids)
///     55	55	1
///
/// Lines starting with '#' before ENTITIES are comments. The reader also
/// accepts the output of `llvm-ir2vec triplets` ("MAX_RELATION=N" then
/// head/tail/relation lines), taking entity names from LLVM 22.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_TRIPLETS_H
#define MLGO_IR2VEC_TRIPLETS_H

#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::ir2vec {

struct Triplet {
  uint32_t head = 0;
  uint32_t tail = 0;
  uint32_t relation = 0;

  friend auto operator<=>(const Triplet&, const Triplet&) = default;
};

inline constexpr uint32_t kTypeRelation = 0;
inline constexpr uint32_t kNextRelation = 1;
inline constexpr uint32_t kFirstArgRelation = 2;
inline constexpr std::string_view kPredicateRelationName = "Predicate";

/// Triplets with the names of their entities and relations. Valid when every
/// id is below the size of its table (`validate`).
struct TripletSet {
  std::vector<std::string> entities;
  std::vector<std::string> relations;
  std::vector<Triplet> triplets;

  /// kParse naming the first triplet whose id is out of range.
  Status validate() const;

  /// Parses the file format above (or llvm-ir2vec's). `origin` prefixes errors.
  static Result<TripletSet> parse(std::string_view text, std::string_view origin = "triplets");
  static Result<TripletSet> load(const std::filesystem::path& path);

  /// The file format above.
  std::string toText() const;
  /// Writes toText() atomically.
  Status save(const std::filesystem::path& path) const;
};

/// Relation names for LLVM's numbering with arguments Arg0..Arg<maxArgs-1>,
/// plus "Predicate" last when `withPredicate`.
std::vector<std::string> relationNames(uint32_t maxArgs, bool withPredicate);

/// A seeded split of `all` into (train, test): `testFraction` of the
/// triplets (rounded down, at least one when the fraction is positive and
/// there are two or more) go to test. Both keep `all`'s tables.
std::pair<TripletSet, TripletSet> splitTriplets(const TripletSet& all, double testFraction,
                                                uint64_t seed);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_TRIPLETS_H
