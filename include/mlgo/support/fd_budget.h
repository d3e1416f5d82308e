//===- mlgo/support/fd_budget.h - file descriptors an environment needs -*- C++ -*-===//
///
/// \file
/// Every open episode holds about kDescriptorsPerEpisode descriptors (the
/// host's three fifo ends, the compiler's output pipe and its pidfd), every
/// running default compile about kDescriptorsPerCompile, and the host keeps
/// kDescriptorReserve for itself (stdio, sockets, the I/O context, cache
/// files, agents' connections). A host runs out of descriptors long before
/// memory, so the server raises its soft RLIMIT_NOFILE to the hard limit at
/// start and refuses a --max-episodes that limit cannot carry.
///
/// Thread-safe; raiseFileLimit() changes the process's limit.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_FD_BUDGET_H
#define MLGO_SUPPORT_FD_BUDGET_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>

namespace mlgo::support {

constexpr uint64_t kDescriptorsPerEpisode = 5;
constexpr uint64_t kDescriptorsPerCompile = 3;
constexpr uint64_t kDescriptorReserve = 64;

struct FileLimit {
  uint64_t soft = 0;
  uint64_t hard = 0;
};

/// Raises the soft RLIMIT_NOFILE to the hard limit (capped at 1<<20) and
/// returns the limits in force afterwards. kIo if they cannot be read.
Result<FileLimit> raiseFileLimit();

/// Descriptors `maxEpisodes` open episodes and `jobs` default compiles need.
uint64_t descriptorsNeeded(size_t maxEpisodes, unsigned jobs);

/// The most episodes `limit` descriptors carry with `jobs` compiles (0 when
/// not even one).
size_t episodesCarried(uint64_t limit, unsigned jobs);

} // namespace mlgo::support

#endif // MLGO_SUPPORT_FD_BUDGET_H
