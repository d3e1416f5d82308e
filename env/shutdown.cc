//===- env/shutdown.cc - cleaning up after an interrupted host --------------===//
#include "mlgo/env/shutdown.h"

#include "mlgo/env/subprocess.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_set>

namespace mlgo::env::shutdown {
namespace {

struct PathRegistry {
  std::mutex mutex;
  std::unordered_set<std::string> paths;
  bool closed = false; ///< emergencyCleanup() ran.
};

PathRegistry& pathRegistry() {
  static auto* registry = new PathRegistry; // Never destroyed (see subprocess.cc).
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

size_t emergencyCleanup() {
  // Children first, so no compiler writes into a directory being removed.
  size_t killed = killAllChildren();
  PathRegistry& registry = pathRegistry();
  std::lock_guard lock(registry.mutex);
  registry.closed = true;
  for (const std::string& path : registry.paths) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  registry.paths.clear();
  return killed;
}

void installInterruptHandler(std::string program) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, program = std::move(program)] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    size_t killed = emergencyCleanup();
    std::fprintf(stderr,
                 "%s: interrupted (SIG%s); stopped %zu compiler%s and removed temporary files\n",
                 program.c_str(), sigabbrev_np(sig) != nullptr ? sigabbrev_np(sig) : "?",
                 killed, killed == 1 ? "" : "s");
    std::fflush(stderr);
    ::_exit(128 + sig);
  }).detach();
}

} // namespace mlgo::env::shutdown
