//===- corpus/file_util.cc - small file helpers for the corpus layer --------===//
#include "file_util.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <unistd.h>

namespace mlgo::corpus::detail {

namespace fs = std::filesystem;

Result<std::string> readFile(const fs::path& path, std::string_view what) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory)
      return makeError(ErrorCode::kIo, "cannot access {} '{}': {}", what, path.string(),
                       ec.message());
    return makeError(ErrorCode::kNotFound, "{} '{}' does not exist", what, path.string());
  }
  if (fs::is_directory(status))
    return makeError(ErrorCode::kIo, "{} '{}' is a directory, not a file", what, path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kIo, "cannot open {} '{}': {}", what, path.string(),
                     std::strerror(errno));
  std::string contents;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    contents.append(buffer, static_cast<std::size_t>(in.gcount()));
  if (in.bad())
    return makeError(ErrorCode::kIo, "error reading {} '{}'", what, path.string());
  return contents;
}

Status writeFileAtomic(const fs::path& path, std::string_view contents) {
  static std::atomic<unsigned long> counter{0};
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot create directory '{}': {}",
                       path.parent_path().string(), ec.message());
  }
  fs::path temp = path;
  temp += fmt::format(".tmp.{}.{}", ::getpid(), counter.fetch_add(1));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      return makeError(ErrorCode::kIo, "cannot create '{}': {}", temp.string(),
                       std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return makeError(ErrorCode::kIo, "cannot write '{}'", temp.string());
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return makeError(ErrorCode::kIo, "cannot rename '{}' to '{}': {}", temp.string(), path.string(),
                     ec.message());
  }
  return Status::success();
}

bool isSafeRelativeName(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string_view::npos)
    return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos)
      end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return false;
    start = end + 1;
  }
  return true;
}

bool resolvesInside(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(path, ec);
  if (ec)
    return false;
  fs::path relative = resolved.lexically_relative(root);
  if (relative.empty() || relative == ".")
    return false;
  return *relative.begin() != "..";
}

} // namespace mlgo::corpus::detail
