//===- trace/module_trace.h - one module's part of a trace -------*- C++ -*-===//
///
/// \file
/// Renders the records of one module's episode as its observations arrive:
/// a context record whenever the context changes, the observation (clang's
/// features then the action tensor) and its outcome, written with outcome 0.
/// Once the episode's rewards are known, finish() writes each context's
/// reward into the outcome after its last observation and hands the records
/// over. A trace is its header line followed by finished modules, whole,
/// one after another; a module that fails is never finished, so it cannot
/// leave partial records behind.
///
/// Not thread-safe; one builder per episode.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_MODULE_TRACE_H
#define MLGO_TRACE_MODULE_TRACE_H

#include "context_rewards.h"
#include "mlgo/protocol/stream_writer.h"
#include "mlgo/protocol/training_log.h"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::trace {

class ModuleTraceBuilder {
public:
  /// `header` is the trace header (makeTraceHeader: a float [1] score);
  /// `module` the module's corpus name. `buffer` is reused for the records
  /// (its contents are dropped, its capacity kept).
  ModuleTraceBuilder(const protocol::LogHeader& header, std::string module,
                     std::string buffer = {});

  /// Records one observation of `function` ("" for module-level problems):
  /// `features` are clang's features (all of them, header order, without the
  /// action), `action` the action tensor. kInvalidArgument when the sizes do
  /// not match the header.
  Status add(std::string_view function, std::span<const std::byte> features,
             std::span<const std::byte> action);

  const std::string& module() const { return module_; }
  size_t observations() const { return observations_; }
  /// The functions that made decisions, in the order they first did.
  const std::vector<std::string>& functions() const { return functions_; }

  /// Writes each context's reward from `rows` (rows with inTrace == false
  /// are ignored) and returns the module's records. A context without a row
  /// is a kInternal error. The builder is spent afterwards.
  Result<std::string> finish(std::span<const ContextResult> rows);

private:
  const protocol::LogHeader* header_;
  std::string module_;
  protocol::StreamWriter writer_;
  std::string records_;
  std::vector<std::span<const std::byte>> views_; ///< One per header feature.
  std::vector<std::string> functions_;
  std::vector<size_t> lastOutcome_; ///< Per function: offset of its latest score bytes.
  size_t current_ = SIZE_MAX;       ///< Function of the latest observation.
  size_t observations_ = 0;
  uint64_t featureBytes_ = 0;
};

} // namespace mlgo::trace

#endif // MLGO_TRACE_MODULE_TRACE_H
