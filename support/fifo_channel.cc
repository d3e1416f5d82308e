//===- support/fifo_channel.cc - the host's ends of a fifo pair -----------===//
#include "mlgo/support/fifo_channel.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mlgo::support {

Status FifoChannel::makeFifos(const std::string& base) {
  for (const char* suffix : {".in", ".out"}) {
    std::string path = base + suffix;
    if (::mkfifo(path.c_str(), 0600) != 0)
      return makeError(ErrorCode::kIo, "cannot create fifo {}: {}", path, std::strerror(errno));
  }
  return Status::success();
}

Status FifoChannel::open() {
  auto openOne = [](const std::string& path, int flags, int& fd) -> Status {
    fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      return makeError(ErrorCode::kIo, "cannot open fifo {}: {}", path, std::strerror(errno));
    return Status::success();
  };
  std::string in = base_ + ".in";
  MLGO_TRY(openOne(in, O_RDONLY, inKeepAliveFd_));
  MLGO_TRY(openOne(in, O_WRONLY, inFd_));
  ::fcntl(inFd_, F_SETFL, ::fcntl(inFd_, F_GETFL) & ~O_NONBLOCK);
  MLGO_TRY(openOne(base_ + ".out", O_RDONLY, outFd_));
  return Status::success();
}

Status FifoChannel::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(inFd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(ErrorCode::kIo, "cannot write to {}.in: {}", base_, std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return Status::success();
}

void FifoChannel::close() {
  for (int* fd : {&inFd_, &inKeepAliveFd_, &outFd_}) {
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  }
}

} // namespace mlgo::support
