//===- ir2vec/file_io.cc - whole-file reads and atomic writes -------------===//
#include "file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mlgo::ir2vec::detail {

Result<std::string> readFile(const std::filesystem::path& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    return makeError(ErrorCode::kNotFound, "{}: no such file", path.string());
  if (std::filesystem::is_directory(status))
    return makeError(ErrorCode::kIo, "{}: is a directory, not a file", path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kIo, "{}: cannot open: {}", path.string(), std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad())
    return makeError(ErrorCode::kIo, "{}: read failed", path.string());
  return std::move(content).str();
}

Status writeFileAtomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path dir = path.parent_path();
  std::string pattern = (dir.empty() ? std::filesystem::path(".") : dir).string() + "/." +
                        path.filename().string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    return makeError(ErrorCode::kIo, "{}: cannot create a temporary file: {}", path.string(),
                     std::strerror(errno));
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(pattern.c_str());
      return makeError(ErrorCode::kIo, "{}: write failed: {}", path.string(), std::strerror(err));
    }
    written += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; give the file the usual permissions.
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || ::rename(pattern.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(pattern.c_str());
    return makeError(ErrorCode::kIo, "{}: cannot write: {}", path.string(), std::strerror(err));
  }
  return Status::success();
}

} // namespace mlgo::ir2vec::detail
