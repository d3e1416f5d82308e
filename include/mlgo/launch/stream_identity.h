//===- mlgo/launch/stream_identity.h - which module a compile is --*- C++ -*-===//
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
/// Single-threaded; no I/O.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_STREAM_IDENTITY_H
#define MLGO_LAUNCH_STREAM_IDENTITY_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mlgo::launch {

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

private:
  struct Hashes;
  StreamIdentity() = default;

  std::vector<size_t> order_; ///< Header index of each identity feature.
  std::unique_ptr<Hashes> hashes_;
  std::string first_;
  uint64_t count_ = 0;
};

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_STREAM_IDENTITY_H
