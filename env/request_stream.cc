//===- env/request_stream.cc - a compiler's records as requests -----------===//
#include "request_stream.h"

#include <fmt/format.h>

namespace mlgo::env::detail {

Result<RequestStream::Next> RequestStream::advance(Observation& observation) {
  protocol::LogEvent event;
  for (;;) {
    auto status = reader_.next(event);
    if (!status.ok()) {
      malformed_ = true;
      return status.error().withContext(fmt::format("malformed stream from {}", program_));
    }
    if (*status == protocol::ReadStatus::kEnd)
      return Next::kEnd;
    if (*status == protocol::ReadStatus::kNeedMore)
      return Next::kNeedMore;
    switch (event.kind) {
    case protocol::EventKind::kContext:
      if (contextSet_.emplace(event.context).second)
        contexts_.emplace_back(event.context);
      break;
    case protocol::EventKind::kOutcome:
      return makeError(ErrorCode::kCompiler,
                       "{} sent an outcome record, which interactive mode never does", program_);
    case protocol::EventKind::kObservation:
      ++observations_;
      if ((sharedCount_ != nullptr ? ++*sharedCount_ : observations_) > maxObservations_)
        return makeError(ErrorCode::kCompiler,
                         "{} made more than {} decision requests (the observation cap); killed",
                         program_, maxObservations_);
      observation.context = reader_.context();
      observation.id = event.id;
      observation.data = event.data;
      observation.tensors = event.tensors;
      pending_ = true;
      return Next::kObservation;
    case protocol::EventKind::kHeader: // header() exposes it.
      break;
    }
  }
}

Status RequestStream::expectNext() const {
  if (pending_)
    return makeError(ErrorCode::kInvalidArgument, "observation {} has not been answered yet",
                     observations_ - 1);
  return Status::success();
}

Status RequestStream::checkAnswer(std::span<const std::byte> advice) const {
  if (!pending_)
    return makeError(ErrorCode::kInvalidArgument, "there is no decision request to answer");
  const auto& spec = reader_.header().advice;
  if (!spec)
    return makeError(ErrorCode::kCompiler, "{}'s header declares no advice tensor", program_);
  if (advice.size() != spec->byteSize())
    return makeError(ErrorCode::kInvalidArgument, "an answer must be {} bytes ({}), not {}",
                     spec->byteSize(), spec->toJson(), advice.size());
  return Status::success();
}

} // namespace mlgo::env::detail
