//===- mlgo/protocol/training_log.h - LLVM's TrainingLogger format -*- C++ -*-===//
///
/// \file
/// The byte stream clang writes to `<base>.out` in interactive MLGO mode, and
/// the format of training logs and of mlgo-env's traces. It is LLVM's
/// "TrainingLogger" format: JSON lines for the structure, raw tensor bytes for
/// the data.
///
/// Wire format
/// -----------
///   stream      := header record*
///   header      := JSON-object "\n"
///                  {"features":[SPEC,...], "score":SPEC?, "advice":SPEC?}
///                  (SPEC: see tensor_spec.h; key order as shown)
///   record      := context | observation | outcome
///   context     := {"context":NAME} "\n"         NAME is a JSON string
///   observation := {"observation":N} "\n" TENSORS "\n"
///                  TENSORS = the raw bytes of every feature, in header order,
///                  each product(shape) * sizeof(type) bytes, little-endian.
///   outcome     := {"outcome":N} "\n" SCORE "\n"
///                  only when the header has "score"; N is the id of the
///                  observation it follows; SCORE is the score tensor's bytes.
///
/// Rules the reader enforces:
/// - Observation ids count 0,1,2,... per context *name* (as LLVM's Logger
///   does): returning to an earlier context continues its numbering.
/// - Every observation and outcome needs a current context.
/// - An outcome's id must equal the id of the observation just before it.
/// - Tensor bytes may contain 0x0a: they are read by size, never by line.
/// - A context may be followed directly by another context or by the end of
///   the stream (a function or module with no decisions).
/// - The stream may end only between records.
///
/// In interactive mode the host answers each observation by writing exactly
/// the advice tensor's bytes (see advice.h) to `<base>.in`; clang writes no
/// `score` or `outcome` there. Training logs and traces carry them.
///
/// Example transcript (regalloc-priority; `<...>` is raw bytes, shown as
/// values; `->` is the host's answer on the other fifo):
///
///     {"features":[{"name":"li_size","type":"int64_t","port":0,"shape":[1]},
///       {"name":"stage","type":"int64_t","port":0,"shape":[1]},
///       {"name":"weight","type":"float","port":0,"shape":[1]}],
///      "advice":{"name":"priority","type":"float","port":0,"shape":[1]}}
///     {"context":"helper"}
///     {"observation":0}
///     <li_size=57><stage=0><weight=0.0127>
///        -> <priority=1.0f>
///     {"observation":1}
///     <li_size=16><stage=0><weight=0.0625>
///        -> <priority=2.0f>
///     {"context":"foo"}
///     {"observation":0}
///     ...
///
/// (The header is one line; it is wrapped here for reading.)
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_TRAINING_LOG_H
#define MLGO_PROTOCOL_TRAINING_LOG_H

#include "mlgo/protocol/tensor_spec.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mlgo::protocol {

/// Index of the spec named `name` among `specs`, or nullopt.
std::optional<size_t> featureIndex(std::span<const TensorSpec> specs, std::string_view name);

/// The header line: feature specs, and the optional score and advice specs.
struct LogHeader {
  std::vector<TensorSpec> features;
  std::optional<TensorSpec> score;
  std::optional<TensorSpec> advice;

  /// Sum of the features' byte sizes: the TENSORS part of one observation.
  uint64_t observationBytes() const;
  /// Index of the feature named `name`, or nullopt.
  std::optional<size_t> featureIndex(std::string_view name) const {
    return protocol::featureIndex(features, name);
  }

  /// Parses a header line (without its newline).
  static Result<LogHeader> fromJson(std::string_view json);
  /// The header line as clang writes it, without the trailing newline.
  std::string toJson() const;

  friend bool operator==(const LogHeader&, const LogHeader&) = default;
};

enum class EventKind : uint8_t { kHeader, kContext, kObservation, kOutcome };

/// One parsed record. Views point into the reader's buffer and stay valid
/// until the next call to a non-const member of the reader.
struct LogEvent {
  EventKind kind = EventKind::kHeader;
  /// Offset in the stream of the record's first byte.
  uint64_t offset = 0;
  /// kContext: the decoded context name.
  std::string_view context;
  /// kObservation / kOutcome: the observation id.
  int64_t id = 0;
  /// kObservation: all feature bytes (without the trailing newline);
  /// kOutcome: the score tensor's bytes.
  std::span<const std::byte> data;
  /// kObservation: one view per feature, in header order.
  std::span<const std::span<const std::byte>> tensors;
};

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_TRAINING_LOG_H
