//===- mlgo/table/stream_identity.h - which module a compile is --*- C++ -*-===//
///
/// \file
/// The stream identity of a compile (docs/tuning-format.md): each
/// observation hashes (SHA-256) to a digest of the raw bytes of its identity
/// features, in the order of `features` (the table's sorted list), as the
/// compiler sent them (native little-endian); the stream's identity is the
/// SHA-256 of all digests concatenated. The first observation's digest finds
/// a module's entry in a tuning table; the stream's confirms it. python/mlgo_env/tuning/identity.py computes
/// the same from the environment's observations.
///
/// An inlining decision's site key (siteKey()) is the first 8 bytes of the
/// SHA-256 of the same bytes without the module-wide features
/// (kModuleWideFeatures: they count every function's call-graph nodes and
/// edges, so an edit anywhere in the module changes them), read as a native
/// uint64_t. A table entry records one per decision; the launcher's stale
/// route (launch/stale_entry.h) answers a changed module's decisions by them.
///
/// Hashing uses the CPU's SHA extensions where it has them (sha256.h).
/// Single-threaded (also siteKey(), which shares the hashing buffer); no I/O.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_STREAM_IDENTITY_H
#define MLGO_TABLE_STREAM_IDENTITY_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::table {

/// Identity features a site key leaves out (identity.py: MODULE_WIDE).
inline constexpr std::array<std::string_view, 2> kModuleWideFeatures = {"edge_count",
                                                                        "node_count"};

class StreamIdentity {
public:
  /// Binds `features` to the header's tensors. kNotFound naming the first
  /// feature the compiler does not send.
  static Result<StreamIdentity> create(const protocol::LogHeader& header,
                                       std::span<const std::string> features);
  StreamIdentity(StreamIdentity&&) noexcept;
  StreamIdentity& operator=(StreamIdentity&&) noexcept;
  ~StreamIdentity();

  /// Adds one observation (one view per header feature, in header order).
  void add(std::span<const std::span<const std::byte>> tensors);

  uint64_t count() const { return count_; }
  /// Hex SHA-256 of the first observation; empty before any.
  const std::string& first() const { return first_; }
  /// Hex SHA-256 of the digests of every observation added so far.
  std::string whole() const;
  /// The site key of one observation (see the file comment); hashes, adds
  /// nothing.
  uint64_t siteKey(std::span<const std::span<const std::byte>> tensors) const;

private:
  struct Hashes;
  StreamIdentity() = default;

  std::vector<size_t> order_; ///< Header index of each identity feature.
  std::vector<size_t> siteOrder_; ///< ...of each that a site key hashes.
  std::unique_ptr<Hashes> hashes_;
  std::string first_;
  uint64_t count_ = 0;
};

} // namespace mlgo::table

#endif // MLGO_TABLE_STREAM_IDENTITY_H
