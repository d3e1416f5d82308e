//===- tests/support/fifo_host.h - a minimal interactive host for tests -*- C++ -*-===//
///
/// \file
/// Test-only: runs one clang in interactive MLGO mode over a fifo pair and
/// answers every observation with `policy`, capturing the exact bytes clang
/// wrote to `<base>.out`. The product's compiler session lives in env/; this
/// host exists so protocol-level tests can capture real streams without it.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_FIFO_HOST_H
#define MLGO_TESTS_SUPPORT_FIFO_HOST_H

#include "mlgo/protocol/stream_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mlgo::testing {

using Policy = std::function<std::vector<std::byte>(const protocol::LogHeader&,
                                                    const protocol::LogEvent&)>;

struct Capture {
  std::string stream;     ///< Every byte clang wrote to <base>.out.
  int answers = 0;        ///< Observations answered.
  int exitCode = -1;      ///< clang's exit code (-1: killed or not started).
  std::string error;      ///< Host-side failure, empty if none.
};

/// Runs `argv` (argv[0] = clang path) with fifos `<base>.in/.out` created
/// here; `argv` must already name `base` in its channel-base flag.
inline Capture runInteractive(const std::vector<std::string>& argv, const std::string& base,
                              const Policy& policy,
                              std::chrono::seconds timeout = std::chrono::seconds(120)) {
  Capture cap;
  const std::string in = base + ".in", out = base + ".out";
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  if (::mkfifo(in.c_str(), 0600) != 0 || ::mkfifo(out.c_str(), 0600) != 0) {
    cap.error = "mkfifo failed";
    return cap;
  }
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    cap.error = "posix_spawn failed";
    return cap;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  bool reaped = false;
  auto giveUp = [&](const char* why) {
    cap.error = why;
    if (!reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      reaped = true;
    }
  };
  // Open .in first (clang reads it first), without blocking forever.
  int inFd = -1;
  while (inFd < 0) {
    inFd = ::open(in.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (inFd >= 0)
      break;
    if (errno != ENXIO) {
      giveUp("open .in failed");
      return cap;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      cap.error = "clang exited without opening the fifos";
      cap.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return cap;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      giveUp("timeout waiting for clang to open the fifos");
      return cap;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::fcntl(inFd, F_SETFL, ::fcntl(inFd, F_GETFL) & ~O_NONBLOCK);
  int outFd = ::open(out.c_str(), O_RDONLY | O_CLOEXEC);
  protocol::StreamReader reader;
  protocol::LogEvent event;
  bool done = false;
  while (!done && cap.error.empty()) {
    pollfd p{outFd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      giveUp("timeout reading from clang");
      break;
    }
    auto space = reader.prepare(65536);
    ssize_t n = ::read(outFd, space.data(), space.size());
    if (n < 0) {
      giveUp("read failed");
      break;
    }
    if (n == 0) {
      reader.finish();
      done = true;
    } else {
      cap.stream.append(reinterpret_cast<const char*>(space.data()), static_cast<size_t>(n));
      reader.commit(static_cast<size_t>(n));
    }
    for (;;) {
      auto st = reader.next(event);
      if (!st) {
        giveUp("stream error");
        cap.error += ": " + st.error().message();
        break;
      }
      if (*st != protocol::ReadStatus::kEvent)
        break;
      if (event.kind != protocol::EventKind::kObservation)
        continue;
      auto answer = policy(reader.header(), event);
      if (::write(inFd, answer.data(), answer.size()) != static_cast<ssize_t>(answer.size())) {
        giveUp("write failed");
        break;
      }
      ++cap.answers;
    }
  }
  if (!reaped) {
    ::waitpid(pid, &status, 0);
    cap.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ::close(inFd);
  if (outFd >= 0)
    ::close(outFd);
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  return cap;
}

} // namespace mlgo::testing

#endif // MLGO_TESTS_SUPPORT_FIFO_HOST_H
