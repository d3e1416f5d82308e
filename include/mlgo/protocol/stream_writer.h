//===- mlgo/protocol/stream_writer.h - TrainingLogger writer -*- C++ -*-===//
///
/// \file
/// Writes the TrainingLogger format (training_log.h) byte for byte as clang's
/// Logger does: same JSON spellings, same escaping of context names, same
/// per-context observation numbering. Output is appended to a caller-owned
/// std::string, which the caller flushes wherever it likes (file, fifo,
/// socket); the writer does no I/O.
///
/// Thread safety: none.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_STREAM_WRITER_H
#define MLGO_PROTOCOL_STREAM_WRITER_H

#include "mlgo/protocol/training_log.h"

#include <string>
#include <unordered_map>

namespace mlgo::protocol {

class StreamWriter {
public:
  /// A writer for streams with this header. The header itself is written by
  /// writeHeader().
  explicit StreamWriter(LogHeader header);

  const LogHeader& header() const { return header_; }

  void writeHeader(std::string& out) const;
  /// Switches context (ids continue if `name` was used before).
  void writeContext(std::string& out, std::string_view name);
  /// One observation from all feature bytes concatenated. Fails (writing
  /// nothing) without a context or when the size is not the header's.
  Status writeObservation(std::string& out, std::span<const std::byte> data);
  /// One observation from one view per feature.
  Status writeObservation(std::string& out, std::span<const std::span<const std::byte>> tensors);
  /// The outcome of the last observation; needs a `score` spec in the header.
  Status writeOutcome(std::string& out, std::span<const std::byte> score);

  /// Id the next observation in the current context will get.
  int64_t nextObservationId() const;

private:
  Status beginObservation(std::string& out);

  LogHeader header_;
  uint64_t observationBytes_;
  std::string context_;
  bool haveContext_ = false;
  bool haveObservation_ = false;
  std::unordered_map<std::string, int64_t> nextIds_;
};

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_STREAM_WRITER_H
