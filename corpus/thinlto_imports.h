//===- corpus/thinlto_imports.h - what a ThinLTO module imported -*- C++ -*-===//
///
/// \file
/// How many functions a ThinLTO corpus module (`<m>.bc`, the backend's input
/// after the link's importing) took from other modules, read from its
/// individual index (`<m>.thinlto.bc`, written by lld's
/// --thinlto-emit-index-files). That index holds the summaries of the
/// module's own definitions and of every function imported into it, each
/// under the path of the module that defines it; the module's own path is
/// the one every definition of `<m>.bc` (available_externally copies aside)
/// is summarised under. The imported functions are the function summaries
/// under any other path.
///
/// Reads both files whole; the bitcode is loaded lazily (its global table,
/// not the function bodies), in a context of the call's own. Thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_THINLTO_IMPORTS_H
#define MLGO_CORPUS_THINLTO_IMPORTS_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <filesystem>

namespace mlgo::corpus::detail {

/// The number of functions `bitcode` imported, per `index`. kIo when a file
/// cannot be read; kParse when one is not LLVM bitcode (of a module, of a
/// summary index), or when no path of the index summarises all of the
/// module's definitions (the index is not this module's).
Result<std::size_t> countImportedFunctions(const std::filesystem::path& bitcode,
                                           const std::filesystem::path& index);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_THINLTO_IMPORTS_H
