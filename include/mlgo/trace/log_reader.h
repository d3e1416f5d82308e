//===- mlgo/trace/log_reader.h - reading a log file -------------*- C++ -*-===//
///
/// \file
/// Reads a TrainingLogger log (a trace, a development-mode training log, or
/// a capture of clang's interactive stream) from a file or a pipe with
/// protocol::StreamReader, and hands each record to a visitor as soon as it
/// is read. So a visitor has seen every readable record when an error is
/// returned, and the error (kParse) names the byte offset where the log
/// stops making sense: a truncated record, a corrupted line, bytes that do
/// not match the header.
///
/// The visitor also gets the header line exactly as written, for keys
/// protocol::LogHeader does not model (trace_header.h's metadata).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_LOG_READER_H
#define MLGO_TRACE_LOG_READER_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <string_view>

namespace mlgo::trace {

class LogVisitor {
public:
  virtual ~LogVisitor() = default;
  /// The header, and its line as written (without the newline).
  virtual Status header(const protocol::LogHeader& header, std::string_view line) = 0;
  /// A context record.
  virtual Status context(std::string_view name) = 0;
  /// An observation of the current context: one view per feature.
  virtual Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) = 0;
  /// The outcome of observation `id` (the score tensor's bytes).
  virtual Status outcome(int64_t id, std::span<const std::byte> score) = 0;
};

/// Reads `path` ("-" = standard input) to the end. Returns the first error:
/// the reader's (with its offset), kNotFound / kIo for the file, or the
/// visitor's (which stops the reading).
Status readLog(const std::filesystem::path& path, LogVisitor& visitor);

/// The same over a file descriptor the caller owns.
Status readLogFd(int fd, std::string_view name, LogVisitor& visitor);

} // namespace mlgo::trace

#endif // MLGO_TRACE_LOG_READER_H
