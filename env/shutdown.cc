//===- env/shutdown.cc - cleaning up after an interrupted host --------------===//
#include "mlgo/env/shutdown.h"

#include "mlgo/env/subprocess.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <unordered_set>

namespace mlgo::env::shutdown {
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

} // namespace

void addPath(const std::filesystem::path& path) {
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  if (registry.closed) {
    // Created while the host is going down: nobody will get to use it.
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    return;
  }
  registry.paths.insert(path.string());
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

size_t emergencyCleanup() {
  PathRegistry& registry = pathRegistry();
  {
    std::lock_guard lock(registry.mutex);
    registry.closed = true; // No commit from here on.
  }
  // Children next, so no compiler writes into a directory being removed.
  size_t killed = killAllChildren();
  std::lock_guard lock(registry.mutex);
  for (const std::string& path : registry.paths) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  registry.paths.clear();
  return killed;
}

} // namespace mlgo::env::shutdown
