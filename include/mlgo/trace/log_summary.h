//===- mlgo/trace/log_summary.h - summarising a log -------------*- C++ -*-===//
///
/// \file
/// A LogVisitor that counts what a log holds:
///  - contexts (distinct names) and those without any observation;
///  - observations and outcomes;
///  - the action histogram: the values of the last feature, when the log
///    says it is the decision (a trace's header names its `policy` or
///    `action`, or the last feature has the name of one of clang's advice
///    tensors); otherwise there is none (e.g. a capture of an interactive
///    stream, whose observations do not include the answers);
///  - reward statistics: over every outcome, and over each context's
///    reward (the outcome of its last observation), with count, min, max,
///    mean and how many are non-zero. The first element of the score
///    tensor is used.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_LOG_SUMMARY_H
#define MLGO_TRACE_LOG_SUMMARY_H

#include "mlgo/trace/log_reader.h"
#include "mlgo/trace/trace_header.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace mlgo::trace {

struct Statistics {
  uint64_t count = 0;
  uint64_t nonZero = 0;
  double min = 0;
  double max = 0;
  double sum = 0;
  void add(double value);
  double mean() const { return count == 0 ? 0 : sum / double(count); }
};

struct LogSummary {
  protocol::LogHeader header;
  TraceMetadata metadata;
  uint64_t contexts = 0;
  uint64_t emptyContexts = 0;
  uint64_t observations = 0;
  uint64_t outcomes = 0;
  /// Name of the feature the histogram counts; empty = no histogram.
  std::string actionFeature;
  /// Action value (text, elements joined by ',') -> count.
  std::map<std::string, uint64_t> actions;
  Statistics allOutcomes;
  Statistics contextRewards;
};

class SummaryVisitor final : public LogVisitor {
public:
  Status header(const protocol::LogHeader& header, std::string_view line) override;
  Status context(std::string_view name) override;
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override;
  Status outcome(int64_t id, std::span<const std::byte> score) override;

  /// The summary of what was read (call after readLog, even if it failed).
  LogSummary result() const;

private:
  struct ContextState {
    uint64_t observations = 0;
    std::optional<double> lastOutcome; ///< Of its latest observation.
  };
  LogSummary summary_;
  std::unordered_map<std::string, ContextState> contexts_;
  ContextState* current_ = nullptr;
  std::string actionText_;
};

/// Human-readable summary; `topActions` caps the histogram lines.
std::string formatSummaryText(const LogSummary& summary, size_t topActions = 30);
/// The summary as one JSON object (histogram complete).
std::string formatSummaryJson(const LogSummary& summary);

} // namespace mlgo::trace

#endif // MLGO_TRACE_LOG_SUMMARY_H
