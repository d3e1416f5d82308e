//===- src/cli/env_options.h - flags shared by environment commands -*- C++ -*-===//
///
/// \file
/// The options every command that runs episodes takes (serve, the default
/// stdio server, trace, replay --verify, corpus optimize): --corpus,
/// --problem, --clang, --jobs, --seed, --cache-dir, --full-compile,
/// --compile-timeout, --max-observations, --ir2vec-vocab and friends. They
/// are the flags of env's option table (mlgo/env/environment_option_table.h),
/// registered on each such (sub)command by addTo() and collected into
/// env::EnvironmentOptions by finish().
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_ENV_OPTIONS_H
#define MLGO_CLI_ENV_OPTIONS_H

#include "mlgo/env/environment.h"
#include "mlgo/env/environment_option_table.h"

#include <CLI/CLI.hpp>

#include <vector>

namespace mlgo::cli {

class EnvironmentFlags {
public:
  /// What the flags start from (and --help shows as defaults): set fields
  /// before addTo() to change a command's defaults.
  env::EnvironmentOptions options = env::defaultEnvironmentOptions();
  /// The --max-episodes option (set by addTo): given explicitly or not.
  CLI::Option* maxEpisodesOption = nullptr;

  EnvironmentFlags() = default;
  EnvironmentFlags(const EnvironmentFlags&) = delete; // CLI11 holds pointers into it
  EnvironmentFlags& operator=(const EnvironmentFlags&) = delete;

  /// Adds the table's flags to `command`. Once per object.
  void addTo(CLI::App* command);
  /// `options` with every flag given set (kInvalidArgument naming the flag).
  Result<env::EnvironmentOptions> finish() const;

private:
  /// One registered flag: its entry, the value CLI11 parses into (of the
  /// entry's kind; kSwitch: whether it was given), its option.
  struct Flag {
    const env::EnvironmentOptionSpec* spec;
    env::OptionValue value;
    CLI::Option* option = nullptr;
  };
  std::vector<Flag> flags_; ///< Reserved once: CLI11 holds pointers into it.
};

} // namespace mlgo::cli

#endif // MLGO_CLI_ENV_OPTIONS_H
