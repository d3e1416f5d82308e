//===- mlgo/env/prepare_corpus.h - optimised IR for a whole corpus -*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus optimize`: makes every module of an environment's corpus
/// ready for episodes ahead of time (Environment::prepareModule), so that no
/// episode pays for building its module's optimised IR
/// (optimized_ir_cache.h). Entries already in the cache are validated, not
/// rebuilt.
///
/// Blocks until every module is done; runs `threads` modules at a time (the
/// environment's job slots bound the compilers). Interrupting the
/// environment's cleanup scope makes the remaining modules fail at once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_PREPARE_CORPUS_H
#define MLGO_ENV_PREPARE_CORPUS_H

#include "mlgo/env/environment.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mlgo::env {

struct PrepareCorpusReport {
  size_t modules = 0;     ///< In the corpus.
  size_t built = 0;       ///< Optimised IR compiled now.
  size_t reused = 0;      ///< Found in the cache, valid.
  size_t fullCompile = 0; ///< Episodes compile them in full (nothing to prepare).
  /// (module, message) of each module that failed, in corpus order.
  std::vector<std::pair<std::string, std::string>> failures;
  double wallSeconds = 0;
};

/// Prepares every module; `onModule(module, error or "")`, when set, is called
/// after each one, never concurrently. `threads` 0 = the environment's jobs.
PrepareCorpusReport
prepareCorpus(Environment& environment, unsigned threads,
              const std::function<void(const std::string&, const std::string&)>& onModule = {});

} // namespace mlgo::env

#endif // MLGO_ENV_PREPARE_CORPUS_H
