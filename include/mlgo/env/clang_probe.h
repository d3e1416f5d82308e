//===- mlgo/env/clang_probe.h - what a clang can do -------------*- C++ -*-===//
///
/// \file
/// Facts about the clang mlgo-env drives, found by running it: its version
/// (`clang --version`), and for each problem whether an interactive compile
/// of a tiny built-in C program works, with the feature and advice specs
/// clang's header declared. The probe answers every decision with the
/// problem's fallback policy, so it also checks that the policy is accepted.
///
/// Also which LLVM options it knows (`-mllvm --help-list-hidden`), to find
/// optional capabilities such as clang's own default eviction decision.
///
/// Thread-safe (each call uses its own temporary directory).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_CLANG_PROBE_H
#define MLGO_ENV_CLANG_PROBE_H

#include "mlgo/env/problem.h"
#include "mlgo/protocol/training_log.h"
#include "mlgo/support/cleanup_scope.h"

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::env {

struct ClangVersion {
  std::filesystem::path path;
  /// The first line of `clang --version`, e.g. "Debian clang version 22.1.8".
  std::string version;
  /// The whole output (part of the baseline cache key).
  std::string fullText;
};

/// Runs `clang --version`. kNotFound when the program does not exist,
/// kCompiler when it fails or prints nothing.
Result<ClangVersion>
queryClangVersion(support::CleanupScope& scope, const std::filesystem::path& clang,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

struct ProblemProbe {
  /// clang's header for this problem.
  protocol::LogHeader header;
  /// Decisions the probe program produced.
  uint64_t observations = 0;
};

/// Compiles the probe program interactively for `problem`. kUnsupported
/// with clang's message when clang rejects the flags, crashes, or never
/// opens the channel; kNotFound when clang does not exist. Its temporary
/// directory goes under `tempParent` (empty = the system's, see temp_dir.h).
Result<ProblemProbe> probeProblem(support::CleanupScope& scope, const std::filesystem::path& clang,
                                  const Problem& problem, const ProblemOptions& options,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                  const std::filesystem::path& tempParent = {});

/// Writes a small C program with calls and register pressure into `dir` and
/// returns a driver command compiling it to `dir/probe.o` at the problem's
/// optimisation level (with -fno-crash-diagnostics, symbolization off). For
/// capability probes: the caller appends the flags under test.
Result<CompileCommand> probeCompileCommand(const std::filesystem::path& clang,
                                           const Problem& problem,
                                           const std::filesystem::path& dir);

/// The option names (without leading dashes and without `=<value>`) listed
/// in the output of `clang -mllvm --help-list-hidden`: every line whose
/// first word starts with `-`. Anything else is ignored.
std::vector<std::string> parseLlvmOptionList(std::string_view helpText);

/// Runs `clang -mllvm --help-list-hidden` (which lists LLVM's options and
/// exits) and parses it. kNotFound when clang does not exist, kCompiler when
/// it fails. The listing goes through a temporary directory under
/// `tempParent` (empty = the system's, see temp_dir.h).
Result<std::vector<std::string>>
queryLlvmOptions(support::CleanupScope& scope, const std::filesystem::path& clang,
                 std::chrono::milliseconds timeout = std::chrono::seconds(60),
                 const std::filesystem::path& tempParent = {});

/// The option making the eviction advisor also send clang's own default
/// decision (newer LLVM than 22).
inline constexpr std::string_view kRegallocIncludeDefaultOption =
    "regalloc-evict-interactive-include-default";

/// Whether `options` (parseLlvmOptionList) offers kRegallocIncludeDefaultOption.
bool offersRegallocIncludeDefault(std::span<const std::string> options);

} // namespace mlgo::env

#endif // MLGO_ENV_CLANG_PROBE_H
