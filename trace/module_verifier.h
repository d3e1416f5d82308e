//===- trace/module_verifier.h - replaying one module of a trace -*- C++ -*-===//
///
/// \file
/// Private to the verifier (trace_verifier.h): one module's recorded
/// observations, and the replay of that module against clang.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_MODULE_VERIFIER_H
#define MLGO_TRACE_MODULE_VERIFIER_H

#include "mlgo/env/environment.h"
#include "mlgo/trace/trace_verifier.h"

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlgo::trace {

struct RecordedObservation {
  std::string context;  ///< Trace context name.
  std::string function; ///< The function part ("" for the module).
  int64_t id = 0;
  std::vector<std::byte> features; ///< All features but the action.
  std::vector<std::byte> action;
  std::optional<std::vector<std::byte>> outcome;
};

struct RecordedModule {
  std::string module;
  size_t position = 0; ///< Order in the trace file.
  std::vector<RecordedObservation> observations;
};

struct ModuleVerified {
  uint64_t observations = 0;
  uint64_t outcomes = 0;
  double defaultScore = 0; ///< The replayed module's scores.
  double policyScore = 0;
};

using ModuleVerdict = std::variant<ModuleVerified, Divergence, Error>;

/// Replays `recorded` (see trace_verifier.h for the checks). `header` is
/// the trace's header (its last feature is the action).
ModuleVerdict verifyModule(env::Environment& environment, const protocol::LogHeader& header,
                           const RecordedModule& recorded);

} // namespace mlgo::trace

#endif // MLGO_TRACE_MODULE_VERIFIER_H
