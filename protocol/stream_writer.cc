//===- protocol/stream_writer.cc - TrainingLogger writer ------------------===//
#include "mlgo/protocol/stream_writer.h"

#include "json_util.h"

#include <llvm/Support/raw_ostream.h>

#include <charconv>

namespace mlgo::protocol {
namespace {

void appendBytes(std::string& out, std::span<const std::byte> bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

/// `{"<key>":<id>}\n`, as llvm::json::OStream writes it.
void appendIdLine(std::string& out, std::string_view key, int64_t id) {
  out += "{\"";
  out += key;
  out += "\":";
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, id);
  (void)ec; // 24 chars hold any int64.
  out.append(digits, end);
  out += "}\n";
}

} // namespace

StreamWriter::StreamWriter(LogHeader header)
    : header_(std::move(header)), observationBytes_(header_.observationBytes()) {}

void StreamWriter::writeHeader(std::string& out) const {
  out += header_.toJson();
  out += '\n';
}

void StreamWriter::writeContext(std::string& out, std::string_view name) {
  context_.assign(name);
  haveContext_ = true;
  haveObservation_ = false;
  nextIds_.try_emplace(context_, 0);
  // Through OStream so escaping (and UTF-8 repair) is exactly LLVM's.
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  json.object([&] { json.attribute("context", llvm::StringRef(name.data(), name.size())); });
  stream << '\n';
}

int64_t StreamWriter::nextObservationId() const {
  auto it = nextIds_.find(context_);
  return it == nextIds_.end() ? 0 : it->second;
}

Status StreamWriter::beginObservation(std::string& out) {
  if (!haveContext_)
    return makeError(ErrorCode::kInvalidArgument, "observation written before any context");
  int64_t& id = nextIds_[context_];
  appendIdLine(out, "observation", id++);
  haveObservation_ = true;
  return Status::success();
}

Status StreamWriter::writeObservation(std::string& out, std::span<const std::byte> data) {
  if (data.size() != observationBytes_)
    return makeError(ErrorCode::kInvalidArgument,
                     "observation has {} bytes, the header's features need {}", data.size(),
                     observationBytes_);
  MLGO_TRY(beginObservation(out));
  appendBytes(out, data);
  out += '\n';
  return Status::success();
}

Status StreamWriter::writeObservation(std::string& out,
                                      std::span<const std::span<const std::byte>> tensors) {
  if (tensors.size() != header_.features.size())
    return makeError(ErrorCode::kInvalidArgument, "observation has {} tensors, the header has {}",
                     tensors.size(), header_.features.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].size() != header_.features[i].byteSize())
      return makeError(ErrorCode::kInvalidArgument, "tensor '{}' has {} bytes, its spec needs {}",
                       header_.features[i].name(), tensors[i].size(),
                       header_.features[i].byteSize());
  MLGO_TRY(beginObservation(out));
  for (const auto& tensor : tensors)
    appendBytes(out, tensor);
  out += '\n';
  return Status::success();
}

Status StreamWriter::writeOutcome(std::string& out, std::span<const std::byte> score) {
  if (!header_.score)
    return makeError(ErrorCode::kInvalidArgument, "outcome written but the header has no score");
  if (!haveObservation_)
    return makeError(ErrorCode::kInvalidArgument, "outcome written without a preceding observation");
  if (score.size() != header_.score->byteSize())
    return makeError(ErrorCode::kInvalidArgument, "score has {} bytes, its spec needs {}",
                     score.size(), header_.score->byteSize());
  appendIdLine(out, "outcome", nextIds_[context_] - 1);
  appendBytes(out, score);
  out += '\n';
  haveObservation_ = false;
  return Status::success();
}

} // namespace mlgo::protocol
