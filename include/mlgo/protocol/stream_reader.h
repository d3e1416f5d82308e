//===- mlgo/protocol/stream_reader.h - incremental log reader -*- C++ -*-===//
///
/// \file
/// An incremental reader of the TrainingLogger format (training_log.h). It is
/// fed arbitrary chunks of bytes, as they come from a pipe, a file or a
/// socket, and yields events as soon as a whole record is buffered. It never
/// blocks and never does I/O itself.
///
/// Usage:
///
///     StreamReader reader;
///     while (...) {
///       auto buf = reader.prepare(65536);           // or reader.feed(bytes)
///       ssize_t n = ::read(fd, buf.data(), buf.size());
///       if (n == 0) reader.finish(); else reader.commit(n);
///       LogEvent ev;
///       for (;;) {
///         auto st = reader.next(ev);
///         if (!st) { report(st.error()); break; }     // names the byte offset
///         if (*st != ReadStatus::kEvent) break;        // kNeedMore or kEnd
///         handle(ev);                                  // views valid until next call
///       }
///     }
///
/// Tensor views are zero-copy: they point into the reader's buffer. Every
/// error message names the byte offset and what was expected there. After an
/// error the reader stays failed and returns the same error.
///
/// Thread safety: none; one reader per stream, used from one thread.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_STREAM_READER_H
#define MLGO_PROTOCOL_STREAM_READER_H

#include "mlgo/protocol/training_log.h"

#include <memory>
#include <string>
#include <unordered_map>

namespace mlgo::protocol {

enum class ReadStatus : uint8_t {
  kEvent,    ///< `event` holds a new event.
  kNeedMore, ///< No whole record is buffered yet: feed more bytes.
  kEnd,      ///< finish() was called and the stream ended between records.
};

class StreamReader {
public:
  struct Options {
    /// Longest JSON line accepted (header included), newline excluded.
    size_t maxLineBytes = 16 << 20;
    /// Largest observation (or score tensor) a header may declare.
    uint64_t maxRecordBytes = uint64_t(1) << 30;
  };

  StreamReader() : StreamReader(Options()) {}
  explicit StreamReader(Options options);

  /// Appends bytes to the stream.
  void feed(std::span<const std::byte> bytes);
  void feed(std::string_view bytes);
  /// Returns writable space for at least `minBytes` more bytes; then
  /// commit(n) makes the first n of them part of the stream. Invalidates the
  /// views of earlier events.
  std::span<std::byte> prepare(size_t minBytes);
  void commit(size_t bytes);
  /// Marks the end of the stream. A partial record left over becomes an error.
  void finish();

  /// Parses the next record, if a whole one is buffered.
  Result<ReadStatus> next(LogEvent& event);

  /// Valid once the header event has been returned.
  const LogHeader& header() const { return header_; }
  bool hasHeader() const { return state_ != State::kHeader; }
  /// The current context name (empty before the first context).
  const std::string& context() const { return context_; }
  /// Offset of the first byte not yet consumed by next().
  uint64_t offset() const { return base_ + head_; }
  /// Bytes buffered but not yet consumed.
  size_t buffered() const { return size_ - head_; }
  bool finished() const { return finished_; }

private:
  enum class State : uint8_t { kHeader, kRecords, kFailed };
  enum class Body : uint8_t { kNone, kObservation, kOutcome };

  Error fail(uint64_t offset, std::string message);
  Result<ReadStatus> atEndOfBuffer();
  Result<ReadStatus> parseHeader(std::string_view line, LogEvent& event);
  Result<ReadStatus> parseRecord(std::string_view line, LogEvent& event);
  void startBody(Body kind, int64_t id, uint64_t bytes);
  Result<ReadStatus> finishBody(LogEvent& event);
  Result<ReadStatus> parseGenericRecord(std::string_view line, LogEvent& event);
  Result<ReadStatus> onContext(std::string name, LogEvent& event);
  Status onObservation(int64_t id);
  Status onOutcome(int64_t id);
  std::string describeBody() const;
  uint64_t absolute(size_t bufferPos) const { return base_ + bufferPos; }

  Options options_;
  std::unique_ptr<std::byte[]> buffer_;
  size_t capacity_ = 0;
  size_t head_ = 0;     ///< First unconsumed byte.
  size_t size_ = 0;     ///< End of the stream data in buffer_.
  uint64_t base_ = 0;   ///< Stream offset of buffer_[0].
  size_t scanFrom_ = 0; ///< Where the newline search resumes.
  bool finished_ = false;
  State state_ = State::kHeader;
  std::optional<Error> error_;

  // A record whose line is parsed but whose body is not yet all buffered.
  Body body_ = Body::kNone;
  int64_t bodyId_ = 0;
  uint64_t bodyBytes_ = 0;
  uint64_t recordStart_ = 0;

  LogHeader header_;
  uint64_t observationBytes_ = 0;
  uint64_t scoreBytes_ = 0;
  std::vector<std::span<const std::byte>> tensors_;
  std::string context_;
  bool haveContext_ = false;
  int64_t* nextId_ = nullptr;     ///< Next observation id of the current context.
  bool outcomeAllowed_ = false;   ///< The previous record was an observation.
  std::unordered_map<std::string, int64_t> nextIds_;
};

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_STREAM_READER_H
