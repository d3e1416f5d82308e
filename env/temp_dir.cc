//===- env/temp_dir.cc - a private temporary directory ----------------------===//
#include "mlgo/env/temp_dir.h"

#include "mlgo/env/shutdown.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace mlgo::env {

std::filesystem::path TempDir::systemTempDir() {
  const char* dir = std::getenv("TMPDIR");
  if (dir != nullptr && *dir != '\0')
    return dir;
  return "/tmp";
}

Result<TempDir> TempDir::create(std::string_view prefix, const std::filesystem::path& parent) {
  std::filesystem::path base = parent.empty() ? systemTempDir() : parent;
  std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
  auto path = shutdown::createPath([&]() -> Result<std::filesystem::path> {
    if (::mkdtemp(pattern.data()) == nullptr)
      return makeError(ErrorCode::kIo, "cannot create a temporary directory in {}: {}",
                       base.string(), std::strerror(errno));
    return std::filesystem::path(pattern);
  });
  if (!path.ok())
    return path.error();
  return TempDir(std::move(*path));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() {
  remove();
}

void TempDir::remove() {
  if (path_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  shutdown::removePath(path_);
  path_.clear();
}

} // namespace mlgo::env
