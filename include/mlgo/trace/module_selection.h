//===- mlgo/trace/module_selection.h - which modules a trace covers -*- C++ -*-===//
///
/// \file
/// Chooses the modules of a corpus a trace covers, as a pure function of
/// the module names, their bitcode sizes, the options and the seed: the same
/// inputs select the same modules, in the same order, on every run and
/// platform.
///
///  1. `moduleFilter` (an ECMAScript regular expression, matched against the
///     whole module name) keeps the matching modules; empty keeps all.
///  2. Every kept module gets a rank: a 64-bit hash (FNV-1a, then the
///     splitmix64 finaliser) of the seed and its name. The
///     floor(samplingRate * kept) modules with the lowest ranks are taken
///     (at least one when samplingRate > 0 and a module is kept), so raising
///     the rate only adds modules, and the corpus's listing order does not
///     matter.
///  3. The sample is ordered by bitcode size, largest first (ties by name),
///     as ml-compiler-opt does, so big modules start early and small ones
///     fill the gaps. This is the order modules are compiled in and written
///     to the trace.
///  4. With `shardCount` N > 1, only the positions i of that order with
///     i % N == `shardIndex` are kept (`trace --shard=K/N`): the N shards
///     partition the sample, each gets big and small modules alike, and
///     interleaving the shards' modules round-robin gives the whole order
///     back (mlgo_env.cluster merges shard traces that way).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_MODULE_SELECTION_H
#define MLGO_TRACE_MODULE_SELECTION_H

#include "mlgo/corpus/corpus.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::trace {

struct SelectionOptions {
  /// Fraction of the (filtered) modules to take, in [0, 1].
  double samplingRate = 1.0;
  uint64_t seed = 0;
  /// Regular expression a module name must match entirely; empty = all.
  std::string moduleFilter;
  /// Step 4: this shard of `shardCount` (0 <= shardIndex < shardCount).
  uint32_t shardIndex = 0;
  uint32_t shardCount = 1;
};

/// Parses `K/N` (0 <= K < N) into options.shardIndex/shardCount;
/// kInvalidArgument naming the text otherwise.
Status parseShard(std::string_view text, SelectionOptions& options);

/// The rank of a module name under a seed (step 2 above).
uint64_t moduleRank(std::string_view name, uint64_t seed);

/// Indices into corpus.modules() of the selected modules, in trace order.
/// kInvalidArgument for a rate outside [0, 1], an invalid regular
/// expression or a shard index not below the shard count; an empty selection is not an error.
Result<std::vector<size_t>> selectModules(const corpus::Corpus& corpus,
                                          const SelectionOptions& options);

/// The same over bare names and sizes (index i = module i).
Result<std::vector<size_t>> selectModules(const std::vector<std::string>& names,
                                          const std::vector<uint64_t>& sizes,
                                          const SelectionOptions& options);

} // namespace mlgo::trace

#endif // MLGO_TRACE_MODULE_SELECTION_H
