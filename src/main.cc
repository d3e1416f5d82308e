//===- src/main.cc - the mlgo-env executable ------------------------------===//
///
/// \file
/// Thin entry point: registers every layer's subcommands, parses, runs the
/// selected one.
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"mlgo-env: reinforcement-learning environments for LLVM's ML-guided optimisations",
               "mlgo-env"};
  app.set_version_flag("--version", MLGO_VERSION);
  app.require_subcommand(0, 1);

  mlgo::cli::Action action;
  mlgo::cli::addCorpusCommands(app, action);
  mlgo::cli::addIr2VecCommands(app, action);
  mlgo::cli::addEnvCommands(app, action);
  mlgo::cli::addServerCommands(app, action);
  mlgo::cli::addTraceCommands(app, action);
  mlgo::cli::addLaunchCommand(app, action);
  mlgo::cli::addPolicyCommands(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!action) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  return action();
}
