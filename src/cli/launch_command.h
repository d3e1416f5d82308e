//===- src/cli/launch_command.h - the launcher as a program of its own -*- C++ -*-===//
///
/// \file
/// `mlgo-env launch` is registered with the other subcommands (commands.h).
/// The same launcher is also a program of its own, mlgo-env-launch
/// (src/launch_main.cc), built without libLLVM.so: a build calls it once per
/// compiler call, and loading libLLVM.so alone costs tens of milliseconds
/// (docs/launch.md).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_LAUNCH_COMMAND_H
#define MLGO_CLI_LAUNCH_COMMAND_H

namespace mlgo::cli {

/// `mlgo-env-launch [--policy=FILE ...] -- COMPILER ARGS...`: parses the
/// launcher's options from argv and runs it; returns the exit code.
int launchProgram(int argc, char** argv);

} // namespace mlgo::cli

#endif // MLGO_CLI_LAUNCH_COMMAND_H
