//===- mlgo/trace/trace_verifier.h - replaying a trace against clang -*- C++ -*-===//
///
/// \file
/// `mlgo-env replay --verify`: re-drives clang through env::Environment
/// with the actions a trace recorded and checks that clang asks exactly the
/// recorded questions and that the scores come out the same:
///
///  - the trace's features (all but the last, the action) must be the
///    environment's observation specs, in order;
///  - module by module (the module is the corpus module the context names,
///    trace_header.h), every observation clang sends must equal the
///    recorded one byte for byte, in the same context, with the same id, and
///    clang must ask neither more nor fewer questions;
///  - every outcome must be the reward recomputed from the new compile
///    (context_rewards.h) after the last observation of a context, and 0
///    elsewhere, compared as float32.
///
/// The problem is the header's `problem` key (else inferred from the action
/// feature's name); inlining traces that include `inlining_default` are
/// replayed with includeDefaultFeature. Modules are verified `jobs` at a time
/// while the file is read; the reported divergence is the first one in file
/// order, and modules after it are not started.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_VERIFIER_H
#define MLGO_TRACE_TRACE_VERIFIER_H

#include "mlgo/env/environment.h"

#include <filesystem>
#include <optional>
#include <string>

namespace mlgo::trace {

struct VerifyOptions {
  std::filesystem::path trace;
  /// Corpus, clang, jobs, cache... `problem` is taken from the trace unless
  /// `problemGiven` (then both must agree).
  env::EnvironmentOptions environment;
  bool problemGiven = false;
};

/// The first place the replay differs from the trace.
struct Divergence {
  std::string module;
  std::string context;
  std::optional<int64_t> observation;
  std::string feature; ///< Feature or score name, when one differs.
  std::optional<uint64_t> element;
  std::string expected; ///< What the trace says.
  std::string actual;   ///< What clang did.
  std::string what;     ///< One sentence saying what differs.

  /// "module m, context c, observation 3, feature 'mask' element 7: the
  /// observation differs (trace: 1; replay: 0)"
  std::string message() const;
};

struct VerifyReport {
  std::string problem;
  uint64_t modules = 0;      ///< Modules replayed to the end and matching.
  uint64_t observations = 0; ///< Observations checked.
  uint64_t outcomes = 0;     ///< Outcomes checked.
  std::optional<Divergence> divergence;
  double wallSeconds = 0;
  /// Over the modules replayed: summed scores and per-module rewards.
  double defaultTotal = 0;
  double policyTotal = 0;
  double moduleRewardSum = 0;
  double moduleRewardMean() const {
    return modules == 0 ? 0 : moduleRewardSum / double(modules);
  }
};

/// Verifies the trace. Errors for what prevents verifying (unreadable or
/// corrupted trace, with its byte offset; unknown problem; environment set-up;
/// a compile that fails); a mismatch is a report with `divergence` set.
Result<VerifyReport> verifyTrace(const VerifyOptions& options);

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRACE_VERIFIER_H
