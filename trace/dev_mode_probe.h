//===- trace/dev_mode_probe.h - is this a development-mode clang? -*- C++ -*-===//
///
/// \file
/// A development-mode clang (LLVM built with TFLite) can write training
/// logs of its own default heuristic, which is exactly a default trace. A
/// release-mode clang, like Debian's clang-22, rejects the logging options
/// ("Unknown command line argument"). The probe compiles a small built-in C
/// program with the problem's development-mode advisor and training-log
/// options and says yes only when clang accepts them, exits with 0 and
/// writes a log whose header parses.
///
/// The options (each after -mllvm), with F the log file:
///  - inlining: -enable-ml-inliner=development -training-log=F
///  - regalloc: -regalloc-enable-advisor=development -regalloc-training-log=F
///  - regalloc-priority: -regalloc-enable-priority-advisor=development
///    -regalloc-priority-training-log=F
///
/// Thread-safe (each call uses its own temporary directory).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_DEV_MODE_PROBE_H
#define MLGO_TRACE_DEV_MODE_PROBE_H

#include "mlgo/env/problem.h"
#include "mlgo/protocol/training_log.h"
#include "mlgo/support/cleanup_scope.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::trace {

struct DevelopmentModeProbe {
  /// clang logs its default decisions for the problem.
  bool supported = false;
  /// Why not (clang's first complaint), or the log's header when supported.
  std::string detail;
  /// The probe log's header, when supported.
  std::optional<protocol::LogHeader> header;
};

/// The `-mllvm` options (with their `-mllvm`) that make clang log its own
/// decisions for `problem` to `logFile`.
std::vector<std::string> trainingLogArgs(const env::Problem& problem,
                                         const std::filesystem::path& logFile);

/// Probes `clang` for `problem`. Errors only when the probe cannot run at
/// all (kNotFound: no such clang; kIo: no temporary directory); a clang
/// that rejects the options is a successful probe saying no.
Result<DevelopmentModeProbe>
probeDevelopmentMode(support::CleanupScope& scope, const std::filesystem::path& clang,
                     const env::Problem& problem,
                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

} // namespace mlgo::trace

#endif // MLGO_TRACE_DEV_MODE_PROBE_H
