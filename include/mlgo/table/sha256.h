//===- mlgo/table/sha256.h - SHA-256 of a whole buffer, fast where it can -*- C++ -*-===//
///
/// \file
/// The hash of the stream identity (stream_identity.h: one per decision) and
/// of the profile a compile reads (launch/profile_identity.h): the launcher
/// computes both for every compile it takes, on the build's critical path. On x86-64 CPUs with the SHA extensions (Intel since Ice
/// Lake / Goldmont, AMD since Zen) the compression function runs on them,
/// about six times faster than llvm::SHA256's portable code; elsewhere, and
/// for the tests' comparison, it is llvm::SHA256. Both give the same digest.
///
/// Pure functions; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_SHA256_H
#define MLGO_TABLE_SHA256_H

#include <array>
#include <cstdint>
#include <span>

namespace mlgo::table {

using Sha256Digest = std::array<uint8_t, 32>;

/// SHA-256 of `data`: with the CPU's SHA extensions when it has them.
Sha256Digest sha256(std::span<const uint8_t> data);

/// SHA-256 of `data` by llvm::SHA256 (the portable code).
Sha256Digest sha256Portable(std::span<const uint8_t> data);

/// Whether sha256() uses the CPU's SHA extensions here.
bool sha256UsesCpuExtensions();

} // namespace mlgo::table

#endif // MLGO_TABLE_SHA256_H
