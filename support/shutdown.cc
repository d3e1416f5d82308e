//===- support/shutdown.cc - cleaning up after an interrupted host --------===//
#include "mlgo/support/shutdown.h"

#include "mlgo/support/subprocess.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_set>

namespace mlgo::support::shutdown {
namespace {

struct PathRegistry {
  std::mutex mutex;
  std::unordered_set<std::string> paths;
  bool closed = false; ///< emergencyCleanup() began.
};

PathRegistry& pathRegistry() {
  // Never destroyed: worker threads may still register paths while statics
  // are torn down at exit.
  static auto* registry = new PathRegistry;
  return *registry;
}

/// Removes `path` and everything in it. Other threads of the host may still
/// be adding entries (a fifo, a file) while remove_all() walks the directory,
/// which then fails with ENOTEMPTY; a few retries outlast that, since each
/// such thread's next step fails once the directory is gone.
void removeWithRetries(const std::filesystem::path& path) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

} // namespace

Result<std::filesystem::path>
createPath(const std::function<Result<std::filesystem::path>()>& create) {
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  if (registry.closed)
    return makeError(ErrorCode::kIo, "cannot create a temporary file: mlgo-env is shutting down");
  auto path = create();
  if (path.ok())
    registry.paths.insert(path->string());
  return path;
}

void removePath(const std::filesystem::path& path) {
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  registry.paths.erase(path.string());
}

Status commitPaths(
    std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames) {
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  if (registry.closed)
    return makeError(ErrorCode::kIo, "interrupted: {} was not written",
                     renames.empty() ? std::string("nothing") : renames.front().second.string());
  for (const auto& [temp, final] : renames) {
    if (std::rename(temp.c_str(), final.c_str()) != 0)
      return makeError(ErrorCode::kIo, "cannot rename {} to {}: {}", temp.string(),
                       final.string(), std::strerror(errno));
    registry.paths.erase(temp.string());
  }
  return Status::success();
}

bool cleanupBegan() {
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  return registry.closed;
}

size_t emergencyCleanup() {
  PathRegistry& registry = pathRegistry();
  {
    std::lock_guard lock(registry.mutex);
    registry.closed = true; // No commit from here on.
  }
  // Children next, so no compiler writes into a directory being removed.
  size_t killed = killAllChildren();
  std::lock_guard lock(registry.mutex);
  for (const std::string& path : registry.paths)
    removeWithRetries(path);
  registry.paths.clear();
  return killed;
}

} // namespace mlgo::support::shutdown
