//===- src/cli/commands.h - subcommand registration -------------*- C++ -*-===//
///
/// \file
/// Each layer's command-line surface registers its subcommands on the
/// top-level CLI11 app. When the user selects one, its parse callback stores
/// the work to do in `action`; main() runs it after parsing and returns its
/// exit code. Commands parse options into a config struct and call a library;
/// they print errors to stderr and never throw.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_COMMANDS_H
#define MLGO_CLI_COMMANDS_H

#include <CLI/CLI.hpp>

#include <functional>

namespace mlgo::cli {

/// The selected command's work; returns the process exit code.
using Action = std::function<int()>;

void addCorpusCommands(CLI::App& app, Action& action);
void addIr2VecCommands(CLI::App& app, Action& action);
void addEnvCommands(CLI::App& app, Action& action);
/// The stdio server (no subcommand) and `serve`.
void addServerCommands(CLI::App& app, Action& action);
void addTraceCommands(CLI::App& app, Action& action);
/// `launch` (a compiler launcher) and `policy check|decide`.
void addLaunchCommand(CLI::App& app, Action& action);
void addPolicyCommands(CLI::App& app, Action& action);

} // namespace mlgo::cli

#endif // MLGO_CLI_COMMANDS_H
