//===- mlgo/table/stream_identity.h - which module a compile is --*- C++ -*-===//
///
/// \file
/// The stream identity of a compile (docs/tuning-format.md), computed alike
/// by the launcher (from the compiler's stream) and by `tune`'s record step
/// (from the environment's observations, through the Python core):
///
///  - the identity features: every feature the compiler sends except the
///    IR2Vec embeddings (kNotIdentityFeatures), sorted by name
///    (identityFeatures()); a table's manifest lists them;
///  - an observation's identity digest (identityDigest()): the SHA-256 of
///    its identity features' raw tensor bytes, in that order, as the
///    compiler sent them (native little-endian), concatenated;
///  - the stream's identity (streamHex()): the SHA-256 of every
///    observation's digest (32 bytes each), concatenated in order, in hex.
///    The first observation's digest finds a module's entry in a tuning
///    table; the stream's confirms it;
///  - an inlining decision's site key (siteKey()): the first 8 bytes of the
///    SHA-256 of the same bytes without the features that describe more than
///    the call site (kNotSiteFeatures; siteFeatures()): the module-wide
///    node_count and edge_count (every function's call-graph nodes and edges:
///    an edit anywhere changes them), and the caller's size, users and
///    call-graph height (an answer that changes at one of the caller's sites,
///    or an edit elsewhere in the caller, changes them for its later sites),
///    read as a native uint64_t. On pcre2 10.46 -> 10.47 (research/
///    stale_keys.py), leaving out the caller's features too kept 90% of the
///    tuned gain per module where the module-wide ones alone kept 5%. A table entry records one per decision; the
///    launcher's stale route (launch/stale_entry.h) answers a changed
///    module's decisions by them.
///
/// Hashing uses the CPU's SHA extensions where it has them (sha256.h). The
/// free functions are pure and thread-safe; a StreamIdentity is
/// single-threaded (add() and siteKey() share its hashing buffer). No I/O.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_STREAM_IDENTITY_H
#define MLGO_TABLE_STREAM_IDENTITY_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"
#include "mlgo/table/sha256.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::table {

/// Features that never enter a stream identity: the search reads them to
/// name callees, but a build compiles without IR2Vec, and they are functions
/// of the IR the other features already see.
inline constexpr std::array<std::string_view, 2> kNotIdentityFeatures = {"callee_embedding",
                                                                         "caller_embedding"};
/// Identity features a site key leaves out (sorted).
inline constexpr std::array<std::string_view, 6> kNotSiteFeatures = {
    "caller_basic_block_count", "caller_conditionally_executed_blocks", "caller_users",
    "callsite_height", "edge_count", "node_count"};

/// The identity features among an observation's feature `names`: sorted,
/// distinct, without kNotIdentityFeatures.
std::vector<std::string> identityFeatures(std::span<const std::string> names);

/// The features a site key hashes: `features` (a table's identity features,
/// in their order) without kNotSiteFeatures.
std::vector<std::string> siteFeatures(std::span<const std::string> features);

/// The SHA-256 of `tensors` (one feature's raw bytes each) concatenated in
/// order; `scratch` holds the bytes (reused across calls).
Sha256Digest identityDigest(std::span<const std::span<const std::byte>> tensors,
                            std::vector<uint8_t>& scratch);

/// The site key of an observation whose site features' tensors are
/// `tensors`, in siteFeatures() order: identityDigest()'s first 8 bytes.
uint64_t siteKey(std::span<const std::span<const std::byte>> tensors,
                 std::vector<uint8_t>& scratch);

/// The stream identity of observations with these digests: the SHA-256 of
/// the digests concatenated, 64 lower-case hex digits.
std::string streamHex(std::span<const Sha256Digest> digests);

/// A compile's stream identity, computed as its observations come.
class StreamIdentity {
public:
  /// Binds `features` (a table's identity features) to the header's
  /// tensors. kNotFound naming the first feature the compiler does not send.
  static Result<StreamIdentity> create(const protocol::LogHeader& header,
                                       std::span<const std::string> features);

  /// Adds one observation (one view per header feature, in header order).
  void add(std::span<const std::span<const std::byte>> tensors);

  uint64_t count() const { return digests_.size(); }
  /// Hex SHA-256 of the first observation; empty before any.
  const std::string& first() const { return first_; }
  /// streamHex() of every observation added so far.
  std::string whole() const { return streamHex(digests_); }
  /// The site key of one observation (header order, as add()); hashes, adds
  /// nothing.
  uint64_t siteKey(std::span<const std::span<const std::byte>> tensors) const;

private:
  StreamIdentity() = default;
  /// `tensors` (header order) picked by `order`, into views_.
  std::span<const std::span<const std::byte>>
  pick(std::span<const size_t> order, std::span<const std::span<const std::byte>> tensors) const;

  std::vector<size_t> order_;     ///< Header index of each identity feature.
  std::vector<size_t> siteOrder_; ///< ...of each that a site key hashes.
  std::vector<Sha256Digest> digests_;
  std::string first_;
  mutable std::vector<std::span<const std::byte>> views_; ///< Hashing buffers.
  mutable std::vector<uint8_t> scratch_;
};

} // namespace mlgo::table

#endif // MLGO_TABLE_STREAM_IDENTITY_H
