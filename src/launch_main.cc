//===- src/launch_main.cc - mlgo-env-launch ---------------------------------===//
///
/// \file
/// The compiler launcher as a program of its own (src/cli/launch_command.h):
/// `mlgo-env-launch --policy=FILE -- COMPILER ARGS...` is
/// `mlgo-env launch --policy=FILE -- COMPILER ARGS...` without loading
/// libLLVM.so.
///
//===----------------------------------------------------------------------===//
#include "cli/launch_command.h"

int main(int argc, char** argv) {
  return mlgo::cli::launchProgram(argc, argv);
}
