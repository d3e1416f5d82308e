//===- trace/log_reader.cc - reading a log file ------------------------------===//
#include "mlgo/trace/log_reader.h"

#include "mlgo/protocol/stream_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace mlgo::trace {
namespace {

constexpr size_t kChunk = 1 << 16;

Status dispatch(const protocol::StreamReader& reader, const protocol::LogEvent& event,
                const std::string& headerLine, LogVisitor& visitor) {
  switch (event.kind) {
  case protocol::EventKind::kHeader:
    return visitor.header(reader.header(), headerLine);
  case protocol::EventKind::kContext:
    return visitor.context(event.context);
  case protocol::EventKind::kObservation:
    return visitor.observation(event.id, event.tensors);
  case protocol::EventKind::kOutcome:
    return visitor.outcome(event.id, event.data);
  }
  return Status::success();
}

} // namespace

Status readLogFd(int fd, std::string_view name, LogVisitor& visitor) {
  protocol::StreamReader reader;
  protocol::LogEvent event;
  std::string headerLine; // The first line, as read, until the header is parsed.
  bool headerDone = false;
  for (;;) {
    auto space = reader.prepare(kChunk);
    ssize_t n = ::read(fd, space.data(), space.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return makeError(ErrorCode::kIo, "cannot read {} at offset {}: {}", name,
                       reader.offset() + reader.buffered(), std::strerror(errno));
    }
    if (n == 0) {
      reader.finish();
    } else {
      if (!headerDone)
        headerLine.append(reinterpret_cast<const char*>(space.data()), static_cast<size_t>(n));
      reader.commit(static_cast<size_t>(n));
    }
    for (;;) {
      auto status = reader.next(event);
      if (!status.ok())
        return status.error().withContext(std::string(name));
      if (*status == protocol::ReadStatus::kEnd)
        return Status::success();
      if (*status == protocol::ReadStatus::kNeedMore)
        break;
      if (event.kind == protocol::EventKind::kHeader) {
        headerLine.resize(std::min(headerLine.size(), headerLine.find('\n')));
        headerDone = true;
      }
      MLGO_TRY(dispatch(reader, event, headerLine, visitor));
      if (headerDone && !headerLine.empty() && event.kind != protocol::EventKind::kHeader)
        headerLine = std::string(); // Frees it.
    }
  }
}

Status readLog(const std::filesystem::path& path, LogVisitor& visitor) {
  if (path == "-")
    return readLogFd(STDIN_FILENO, "<stdin>", visitor);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return makeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot open {}: {}",
                     path.string(), std::strerror(error));
  }
  Status status = readLogFd(fd, path.string(), visitor);
  ::close(fd);
  return status;
}

} // namespace mlgo::trace
