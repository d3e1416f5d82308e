//===- tests/support/log_events.h - owned copies of log events -*- C++ -*-===//
///
/// \file
/// Test helpers: read a whole TrainingLogger stream into owned events, fed in
/// chunks chosen by the caller, so tests can compare event sequences.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_LOG_EVENTS_H
#define MLGO_TESTS_SUPPORT_LOG_EVENTS_H

#include "mlgo/protocol/stream_reader.h"
#include "mlgo/protocol/stream_writer.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace mlgo::testing {

struct OwnedEvent {
  protocol::EventKind kind;
  uint64_t offset = 0;
  std::string context;
  int64_t id = 0;
  std::string data;
  std::vector<std::string> tensors;

  friend bool operator==(const OwnedEvent&, const OwnedEvent&) = default;
};

struct ReadOutcome {
  std::vector<OwnedEvent> events;
  protocol::LogHeader header;
  std::optional<std::string> error; ///< The reader's error, if any.
};

/// Feeds `stream` to a reader in chunks whose sizes `nextChunk` returns
/// (each >= 1), draining events after every chunk, then finishes.
inline ReadOutcome readInChunks(std::string_view stream, const std::function<size_t()>& nextChunk) {
  ReadOutcome out;
  protocol::StreamReader reader;
  protocol::LogEvent event;
  size_t at = 0;
  auto drain = [&]() -> bool {
    for (;;) {
      auto status = reader.next(event);
      if (!status) {
        out.error = status.error().message();
        return false;
      }
      if (*status != protocol::ReadStatus::kEvent)
        return true;
      OwnedEvent owned{event.kind, event.offset, std::string(event.context), event.id,
                       std::string(reinterpret_cast<const char*>(event.data.data()),
                                   event.data.size()),
                       {}};
      if (event.kind != protocol::EventKind::kContext)
        owned.context = reader.context();
      for (auto t : event.tensors)
        owned.tensors.emplace_back(reinterpret_cast<const char*>(t.data()), t.size());
      out.events.push_back(std::move(owned));
    }
  };
  while (at < stream.size()) {
    size_t n = std::min(std::max<size_t>(nextChunk(), 1), stream.size() - at);
    reader.feed(stream.substr(at, n));
    at += n;
    if (!drain())
      break;
  }
  if (!out.error) {
    reader.finish();
    drain();
  }
  if (reader.hasHeader())
    out.header = reader.header();
  return out;
}

inline ReadOutcome readWhole(std::string_view stream) {
  return readInChunks(stream, [&] { return stream.size(); });
}

inline ReadOutcome readByteByByte(std::string_view stream) {
  return readInChunks(stream, [] { return size_t(1); });
}

inline ReadOutcome readRandomChunks(std::string_view stream, uint32_t seed, size_t maxChunk = 5000) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> dist(1, maxChunk);
  return readInChunks(stream, [&] { return dist(rng); });
}

/// Re-serialises events with a StreamWriter built from `header`.
inline Result<std::string> rewrite(const protocol::LogHeader& header,
                                   const std::vector<OwnedEvent>& events) {
  protocol::StreamWriter writer(header);
  std::string out;
  for (const auto& e : events) {
    auto bytes = std::as_bytes(std::span(e.data.data(), e.data.size()));
    switch (e.kind) {
    case protocol::EventKind::kHeader: writer.writeHeader(out); break;
    case protocol::EventKind::kContext: writer.writeContext(out, e.context); break;
    case protocol::EventKind::kObservation: MLGO_TRY(writer.writeObservation(out, bytes)); break;
    case protocol::EventKind::kOutcome: MLGO_TRY(writer.writeOutcome(out, bytes)); break;
    }
  }
  return out;
}

} // namespace mlgo::testing

#endif // MLGO_TESTS_SUPPORT_LOG_EVENTS_H
