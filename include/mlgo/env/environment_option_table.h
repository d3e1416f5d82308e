//===- mlgo/env/environment_option_table.h - the options, listed once -*- C++ -*-===//
///
/// \file
/// Every EnvironmentOptions field a user sets, listed once for every host:
/// mlgo-env registers its environment flags from this table
/// (src/cli/env_options.cc), the Python core converts make()'s keyword
/// arguments with it (python/src/convert.cc), and
/// `mlgo_env.environment_options()` lists it.
///
/// An entry names its option as a flag (`--cache-dir`) and as a keyword
/// (`cache_dir`), either of which may be missing (`module_embeddings` is a
/// keyword only), says what kind of value it takes, carries the flag's
/// --help text, and reads and sets the field(s) of EnvironmentOptions it
/// stands for:
///
///   EnvironmentOptions o = defaultEnvironmentOptions();
///   for (const auto& spec : environmentOptionTable())
///     if (spec.keyword == "jobs")
///       MLGO_TRY(setEnvironmentOption(spec, o, uint64_t{4}, "jobs"));
///   MLGO_TRY(checkEnvironmentOptions(o));   // what only the whole set shows
///
/// Values are checked where they are set (kInvalidArgument "NAME: what is
/// wrong", NAME as the user spelled it); what only the set as a whole can
/// show (contradicting flag rules) by checkEnvironmentOptions, after the
/// last one. The table is immutable and lives as long as the program;
/// every function here is pure and thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_ENVIRONMENT_OPTION_TABLE_H
#define MLGO_ENV_ENVIRONMENT_OPTION_TABLE_H

#include "mlgo/env/environment.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlgo::env {

/// What an option's value is, and the alternative of OptionValue holding it.
enum class OptionKind {
  kText,    ///< std::string
  kPath,    ///< std::string naming a file or directory
  kCount,   ///< uint64_t
  kSeconds, ///< double, a positive number of seconds
  kSwitch,  ///< bool; as a flag, giving it sets EnvironmentOptionSpec::flagValue
  kTexts,   ///< std::vector<std::string>; as a flag, one per repetition
};

/// "text", "path", "count", "seconds", "switch", "texts".
std::string_view optionKindName(OptionKind kind);

using OptionValue = std::variant<bool, uint64_t, double, std::string, std::vector<std::string>>;

struct EnvironmentOptionSpec {
  /// make()'s keyword and the Python core's key; empty: none.
  std::string_view keyword = {};
  /// mlgo-env's flag, with its dashes; empty: none.
  std::string_view flag = {};
  OptionKind kind = OptionKind::kText;
  /// What it does (the flag's --help text).
  std::string_view help = {};
  /// --help shows the default after the text (CLI11's [default]).
  bool showDefault = false;
  /// kSwitch: the value a given flag stands for (--no-disk-cache: false).
  bool flagValue = true;
  /// The option's value in `options` (of `kind`): defaults, --help.
  OptionValue (*get)(const EnvironmentOptions& options) = nullptr;
  /// Sets the option in `options` from `value` (of `kind`, which the
  /// caller ensures); kInvalidArgument saying what is wrong with it.
  Status (*set)(EnvironmentOptions& options, OptionValue value) = nullptr;
};

/// Every option, in --help's order.
std::span<const EnvironmentOptionSpec> environmentOptionTable();

/// The entry with make() keyword `keyword`, or null.
const EnvironmentOptionSpec* findEnvironmentOption(std::string_view keyword);

/// What hosts start from: EnvironmentOptions' defaults, with the clang
/// mlgo-env was configured with (--help's "default:").
EnvironmentOptions defaultEnvironmentOptions();

/// spec.set, its error prefixed "NAME: " (`name`: the flag or keyword the
/// user gave). `value` must hold `spec.kind`'s alternative.
Status setEnvironmentOption(const EnvironmentOptionSpec& spec, EnvironmentOptions& options,
                            OptionValue value, std::string_view name);

/// Checks what only the whole set shows: flag rules that contradict each
/// other (corpus::validateFlagRules). kInvalidArgument naming the flag.
Status checkEnvironmentOptions(const EnvironmentOptions& options);

} // namespace mlgo::env

#endif // MLGO_ENV_ENVIRONMENT_OPTION_TABLE_H
