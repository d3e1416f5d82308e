//===- launch/sha256.h - SHA-256 of a whole buffer, fast where it can -*- C++ -*-===//
///
/// \file
/// Private to launch/: the launcher hashes the profile a compile reads on
/// every compile it takes (profile_identity.h), so the hash is on the build's
/// critical path. On x86-64 CPUs with the SHA extensions (Intel since Ice
/// Lake / Goldmont, AMD since Zen) the compression function runs on them,
/// about six times faster than llvm::SHA256's portable code; elsewhere, and
/// for the tests' comparison, it is llvm::SHA256. Both give the same digest.
///
/// Pure functions; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_SHA256_H
#define MLGO_LAUNCH_SHA256_H

#include <array>
#include <cstdint>
#include <span>

namespace mlgo::launch {

using Sha256Digest = std::array<uint8_t, 32>;

/// SHA-256 of `data`: with the CPU's SHA extensions when it has them.
Sha256Digest sha256(std::span<const uint8_t> data);

/// SHA-256 of `data` by llvm::SHA256 (the portable code).
Sha256Digest sha256Portable(std::span<const uint8_t> data);

/// Whether sha256() uses the CPU's SHA extensions here.
bool sha256UsesCpuExtensions();

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_SHA256_H
