//===- protocol/stream_reader.cc - incremental log reader -----------------===//
#include "mlgo/protocol/stream_reader.h"

#include "json_util.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace mlgo::protocol {
namespace {

constexpr std::string_view kObservationPrefix = "{\"observation\":";
constexpr std::string_view kOutcomePrefix = "{\"outcome\":";

/// Parses `{"<key>":<int>}` written without spaces (what clang writes).
/// Returns false if the line has any other shape.
bool parseCompactIdLine(std::string_view line, std::string_view prefix, int64_t& id) {
  if (line.size() <= prefix.size() + 1 || line.substr(0, prefix.size()) != prefix ||
      line.back() != '}')
    return false;
  const char* first = line.data() + prefix.size();
  const char* last = line.data() + line.size() - 1;
  auto [end, ec] = std::from_chars(first, last, id);
  return ec == std::errc() && end == last;
}

/// A short printable excerpt of `line` for error messages.
std::string excerpt(std::string_view line) {
  std::string out;
  for (char c : line.substr(0, 40))
    out += (c >= 0x20 && c < 0x7f) ? c : '.';
  if (line.size() > 40)
    out += "...";
  return out;
}

} // namespace

StreamReader::StreamReader(Options options) : options_(options) {}

void StreamReader::feed(std::span<const std::byte> bytes) {
  if (bytes.empty())
    return;
  auto space = prepare(bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  commit(bytes.size());
}

void StreamReader::feed(std::string_view bytes) {
  feed(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::span<std::byte> StreamReader::prepare(size_t minBytes) {
  if (capacity_ - size_ < minBytes && head_ > 0) {
    // Drop consumed bytes; keep offsets absolute through base_.
    size_t live = size_ - head_;
    std::memmove(buffer_.get(), buffer_.get() + head_, live);
    base_ += head_;
    scanFrom_ -= head_;
    size_ = live;
    head_ = 0;
  }
  if (capacity_ - size_ < minBytes) {
    size_t wanted = std::max({capacity_ * 2, size_ + minBytes, size_t(64) << 10});
    auto grown = std::make_unique_for_overwrite<std::byte[]>(wanted);
    if (size_)
      std::memcpy(grown.get(), buffer_.get(), size_);
    buffer_ = std::move(grown);
    capacity_ = wanted;
  }
  return {buffer_.get() + size_, capacity_ - size_};
}

void StreamReader::commit(size_t bytes) { size_ += std::min(bytes, capacity_ - size_); }

void StreamReader::finish() { finished_ = true; }

Error StreamReader::fail(uint64_t offset, std::string message) {
  state_ = State::kFailed;
  error_ = Error(ErrorCode::kParse, fmt::format("offset {}: {}", offset, message));
  return *error_;
}

Result<ReadStatus> StreamReader::next(LogEvent& event) {
  if (state_ == State::kFailed)
    return *error_;
  if (body_ != Body::kNone)
    return finishBody(event);

  const char* data = reinterpret_cast<const char*>(buffer_.get());
  const void* newline =
      scanFrom_ < size_ ? std::memchr(data + scanFrom_, '\n', size_ - scanFrom_) : nullptr;
  if (!newline) {
    scanFrom_ = size_;
    if (size_ - head_ > options_.maxLineBytes)
      return fail(absolute(head_),
                  fmt::format("no newline within {} bytes: expected a JSON record line",
                              options_.maxLineBytes));
    return atEndOfBuffer();
  }
  size_t lineEnd = static_cast<const char*>(newline) - data;
  std::string_view line(data + head_, lineEnd - head_);
  if (line.size() > options_.maxLineBytes)
    return fail(absolute(head_), fmt::format("line of {} bytes exceeds the limit of {}",
                                             line.size(), options_.maxLineBytes));
  recordStart_ = absolute(head_);
  event.offset = recordStart_;
  head_ = scanFrom_ = lineEnd + 1;
  if (state_ == State::kHeader)
    return parseHeader(line, event);
  return parseRecord(line, event);
}

Result<ReadStatus> StreamReader::atEndOfBuffer() {
  if (!finished_)
    return ReadStatus::kNeedMore;
  if (head_ == size_) {
    if (state_ == State::kHeader)
      return fail(absolute(head_), "empty stream: expected a header line");
    return ReadStatus::kEnd;
  }
  if (state_ == State::kHeader)
    return fail(absolute(size_), "stream ends inside the header line: expected a newline");
  return fail(absolute(size_),
              fmt::format("stream ends inside a record line ('{}'): expected a newline",
                          excerpt({reinterpret_cast<const char*>(buffer_.get()) + head_,
                                   size_ - head_})));
}

Result<ReadStatus> StreamReader::parseHeader(std::string_view line, LogEvent& event) {
  auto header = LogHeader::fromJson(line);
  if (!header)
    return fail(recordStart_, header.error().message());
  if (header->observationBytes() > options_.maxRecordBytes)
    return fail(recordStart_, fmt::format("header: an observation would be {} bytes, over the "
                                          "limit of {}",
                                          header->observationBytes(), options_.maxRecordBytes));
  if (header->score && header->score->byteSize() > options_.maxRecordBytes)
    return fail(recordStart_, fmt::format("header: the score tensor would be {} bytes, over the "
                                          "limit of {}",
                                          header->score->byteSize(), options_.maxRecordBytes));
  header_ = std::move(*header);
  observationBytes_ = header_.observationBytes();
  scoreBytes_ = header_.score ? header_.score->byteSize() : 0;
  tensors_.assign(header_.features.size(), {});
  state_ = State::kRecords;
  event.kind = EventKind::kHeader;
  return ReadStatus::kEvent;
}

Result<ReadStatus> StreamReader::parseRecord(std::string_view line, LogEvent& event) {
  int64_t id = 0;
  if (parseCompactIdLine(line, kObservationPrefix, id)) {
    MLGO_TRY(onObservation(id));
    return finishBody(event);
  }
  if (parseCompactIdLine(line, kOutcomePrefix, id)) {
    MLGO_TRY(onOutcome(id));
    return finishBody(event);
  }
  return parseGenericRecord(line, event);
}

Result<ReadStatus> StreamReader::parseGenericRecord(std::string_view line, LogEvent& event) {
  auto parsed = llvm::json::parse(llvm::StringRef(line.data(), line.size()));
  if (!parsed)
    return fail(recordStart_,
                fmt::format("expected a context, observation or outcome record, found '{}' "
                            "(invalid JSON: {})",
                            excerpt(line), detail::takeMessage(parsed.takeError())));
  const auto* object = parsed->getAsObject();
  if (object && object->size() == 1) {
    if (auto name = object->getString("context"))
      return onContext(name->str(), event);
    if (auto id = object->getInteger("observation")) {
      MLGO_TRY(onObservation(*id));
      return finishBody(event);
    }
    if (auto id = object->getInteger("outcome")) {
      MLGO_TRY(onOutcome(*id));
      return finishBody(event);
    }
  }
  return fail(recordStart_,
              fmt::format("expected a context, observation or outcome record, found '{}'",
                          excerpt(line)));
}

Result<ReadStatus> StreamReader::onContext(std::string name, LogEvent& event) {
  context_ = std::move(name);
  haveContext_ = true;
  nextId_ = &nextIds_.try_emplace(context_, 0).first->second;
  outcomeAllowed_ = false;
  event.kind = EventKind::kContext;
  event.context = context_;
  return ReadStatus::kEvent;
}

Status StreamReader::onObservation(int64_t id) {
  if (!haveContext_)
    return fail(recordStart_, fmt::format("observation {} before any context record", id));
  if (id != *nextId_)
    return fail(recordStart_,
                fmt::format("observation id out of order in context '{}': expected {}, found {}",
                            context_, *nextId_, id));
  ++*nextId_;
  outcomeAllowed_ = true;
  startBody(Body::kObservation, id, observationBytes_);
  return Status::success();
}

Status StreamReader::onOutcome(int64_t id) {
  if (!header_.score)
    return fail(recordStart_, fmt::format("outcome {} in a stream whose header has no 'score'", id));
  if (!outcomeAllowed_)
    return fail(recordStart_, fmt::format("outcome {} does not follow an observation", id));
  if (id != *nextId_ - 1)
    return fail(recordStart_,
                fmt::format("outcome id mismatch in context '{}': expected {} (the preceding "
                            "observation), found {}",
                            context_, *nextId_ - 1, id));
  outcomeAllowed_ = false;
  startBody(Body::kOutcome, id, scoreBytes_);
  return Status::success();
}

void StreamReader::startBody(Body kind, int64_t id, uint64_t bytes) {
  body_ = kind;
  bodyId_ = id;
  bodyBytes_ = bytes;
}

std::string StreamReader::describeBody() const {
  return fmt::format("{} {} (context '{}')",
                     body_ == Body::kObservation ? "observation" : "outcome", bodyId_, context_);
}

Result<ReadStatus> StreamReader::finishBody(LogEvent& event) {
  size_t available = size_ - head_;
  if (available <= bodyBytes_) {
    if (!finished_)
      return ReadStatus::kNeedMore;
    return fail(absolute(size_),
                fmt::format("stream ends inside {}: expected {} bytes of tensor data and a "
                            "newline, have {}",
                            describeBody(), bodyBytes_, available));
  }
  const std::byte* body = buffer_.get() + head_;
  if (body[bodyBytes_] != std::byte{'\n'})
    return fail(absolute(head_ + bodyBytes_),
                fmt::format("expected a newline after the {} bytes of {}, found byte 0x{:02x}",
                            bodyBytes_, describeBody(), static_cast<unsigned>(body[bodyBytes_])));
  event.offset = recordStart_;
  event.id = bodyId_;
  event.data = {body, static_cast<size_t>(bodyBytes_)};
  if (body_ == Body::kObservation) {
    size_t at = 0;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      size_t bytes = header_.features[i].byteSize();
      tensors_[i] = {body + at, bytes};
      at += bytes;
    }
    event.kind = EventKind::kObservation;
    event.tensors = tensors_;
  } else {
    event.kind = EventKind::kOutcome;
    event.tensors = {};
  }
  head_ = scanFrom_ = head_ + bodyBytes_ + 1;
  body_ = Body::kNone;
  return ReadStatus::kEvent;
}

} // namespace mlgo::protocol
