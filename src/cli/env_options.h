//===- src/cli/env_options.h - flags shared by environment commands -*- C++ -*-===//
///
/// \file
/// The options every command that runs episodes takes (serve, the default
/// stdio server, trace, replay --verify): --corpus, --problem, --clang,
/// --jobs, --seed, --cache-dir, --full-compile, --compile-timeout, --max-observations,
/// --ir2vec-vocab and friends. They are registered on each such
/// (sub)command and collected into env::EnvironmentOptions by finish().
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_ENV_OPTIONS_H
#define MLGO_CLI_ENV_OPTIONS_H

#include "mlgo/env/environment.h"

#include <CLI/CLI.hpp>

namespace mlgo::cli {

struct EnvironmentFlags {
  env::EnvironmentOptions options;
  double compileTimeoutSeconds = 600;
  std::string sampler = "round-robin";
  uint64_t seed = 0;
  bool noDiskCache = false;
  std::string ir2vecVocab; ///< --ir2vec-vocab: a path or "default".
  std::vector<std::string> deleteFlags, replaceFlags, addFlags;
  /// The --max-episodes option (set by addTo): given explicitly or not.
  CLI::Option* maxEpisodesOption = nullptr;

  /// Adds the flags to `command`.
  void addTo(CLI::App* command);
  /// Validates and returns the options (kInvalidArgument naming the flag).
  Result<env::EnvironmentOptions> finish() const;
};

/// The path a `--ir2vec-vocab` value names: `default` is the shipped
/// vocabulary (a file really called default is ./default), anything else a
/// path as given.
std::filesystem::path ir2vecVocabularyArgument(const std::string& value);

} // namespace mlgo::cli

#endif // MLGO_CLI_ENV_OPTIONS_H
