//===- support/cleanup_scope.cc - what a run must not leave behind --------===//
#include "mlgo/support/cleanup_scope.h"

#include "child_wait.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace mlgo::support {
namespace {

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

bool waitForDeath(pid_t pid, Deadline deadline) {
  for (;;) {
    siginfo_t info = {};
    int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG);
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc < 0 || info.si_pid == pid)
      return true; // ECHILD: reaped by its owner meanwhile.
    if (Clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

CleanupScope::~CleanupScope() {
  cleanup();
}

//===-- paths -------------------------------------------------------------===//

Result<std::filesystem::path>
CleanupScope::createPath(const std::function<Result<std::filesystem::path>()>& create) {
  std::lock_guard lock(pathMutex_);
  if (pathsClosed_)
    return makeError(ErrorCode::kIo, "cannot create a temporary file: mlgo-env is shutting down");
  auto path = create();
  if (path.ok())
    paths_.insert(path->string());
  return path;
}

void CleanupScope::removePath(const std::filesystem::path& path) {
  std::lock_guard lock(pathMutex_);
  paths_.erase(path.string());
}

Status CleanupScope::commitPaths(
    std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames) {
  std::lock_guard lock(pathMutex_);
  if (pathsClosed_)
    return makeError(ErrorCode::kIo, "interrupted: {} was not written",
                     renames.empty() ? std::string("nothing") : renames.front().second.string());
  for (const auto& [temp, final] : renames) {
    if (std::rename(temp.c_str(), final.c_str()) != 0)
      return makeError(ErrorCode::kIo, "cannot rename {} to {}: {}", temp.string(), final.string(),
                       std::strerror(errno));
    paths_.erase(temp.string());
  }
  return Status::success();
}

bool CleanupScope::cleanupBegan() const {
  std::lock_guard lock(pathMutex_);
  return pathsClosed_;
}

size_t CleanupScope::registeredPaths() const {
  std::lock_guard lock(pathMutex_);
  return paths_.size();
}

//===-- children ----------------------------------------------------------===//

Status CleanupScope::beginSpawn(std::string_view program) {
  std::lock_guard lock(childMutex_);
  if (childrenClosed_)
    return makeError(ErrorCode::kIo, "cannot run '{}': mlgo-env is shutting down", program);
  ++spawning_;
  return Status::success();
}

void CleanupScope::endSpawn(pid_t pid) {
  std::lock_guard lock(childMutex_);
  if (pid > 0)
    live_.insert(pid);
  if (--spawning_ == 0)
    idle_.notify_all();
}

pid_t CleanupScope::reapChild(pid_t pid, int* status, struct rusage* usage) {
  std::lock_guard lock(childMutex_);
  pid_t r;
  do {
    r = ::wait4(pid, status, WNOHANG, usage);
  } while (r < 0 && errno == EINTR);
  if (r != 0)
    live_.erase(pid);
  return r;
}

size_t CleanupScope::liveChildren() const {
  std::lock_guard lock(childMutex_);
  return live_.size();
}

size_t CleanupScope::killChildren() {
  std::vector<pid_t> signalled;
  {
    std::unique_lock lock(childMutex_);
    childrenClosed_ = true;
    idle_.wait(lock, [&] { return spawning_ == 0; });
    for (pid_t pid : live_)
      ::killpg(pid, SIGKILL);
    signalled.assign(live_.begin(), live_.end());
  }
  // SIGKILL is asynchronous: a compiler may still be finishing a system
  // call (creating its output file, say) when killpg() returns, and the
  // paths go next, so wait until they are dead. No pid is recycled
  // meanwhile: nothing is spawned in this scope any more, an unreaped child
  // keeps its pid, and a reaped one is simply ECHILD.
  Deadline deadline = Clock::now() + std::chrono::seconds(5);
  for (pid_t pid : signalled)
    waitForDeath(pid, deadline);
  return signalled.size();
}

//===-- cleanup -----------------------------------------------------------===//

size_t CleanupScope::cleanup() {
  {
    std::lock_guard lock(pathMutex_);
    pathsClosed_ = true; // No commit from here on.
  }
  // Children next, so no compiler writes into a directory being removed.
  size_t killed = killChildren();
  std::lock_guard lock(pathMutex_);
  for (const std::string& path : paths_)
    removeWithRetries(path);
  paths_.clear();
  return killed;
}

} // namespace mlgo::support
