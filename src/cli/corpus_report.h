//===- src/cli/corpus_report.h - shared corpus command output ---*- C++ -*-===//
///
/// \file
/// Output shared by the corpus subcommands (corpus_commands.cc and
/// corpus_build_command.cc).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CLI_CORPUS_REPORT_H
#define MLGO_CLI_CORPUS_REPORT_H

#include "mlgo/corpus/extract.h"
#include "mlgo/support/result.h"

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace mlgo::cli {

/// Prints "mlgo-env corpus: error: ..." to stderr; returns exit code 1.
int corpusFail(const Error& error);

/// Prints what was extracted, the notes, and every skipped object grouped by
/// reason (at most 10 messages per reason) to stdout.
void printExtractSummary(const corpus::ExtractSummary& summary,
                         const corpus::ExtractOptions& options);

/// Registers `corpus build` (corpus_build_command.cc).
void addCorpusBuildCommand(CLI::App& corpusApp, Action& action);
/// Registers `corpus optimize` (corpus_optimize_command.cc).
void addCorpusOptimizeCommand(CLI::App& corpusApp, Action& action);

} // namespace mlgo::cli

#endif // MLGO_CLI_CORPUS_REPORT_H
