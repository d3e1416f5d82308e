//===- ir2vec/process_test_util.h - running tools from tests ----*- C++ -*-===//
///
/// \file
/// Test-only: starts programs without a shell (posix_spawn), stdin from
/// /dev/null and output to files, with a deadline after which the child is
/// killed and reaped.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_PROCESS_TEST_UTIL_H
#define MLGO_IR2VEC_PROCESS_TEST_UTIL_H

#include "test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mlgo::ir2vec::testing {

namespace fs = std::filesystem;

struct ProcessResult {
  int exitCode = -1;
  std::string err;
};

/// Starts argv[0] (no shell) with stdout/stderr redirected to files.
inline pid_t spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0)
    pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

/// Waits up to `seconds`, then kills; returns the exit code (-1 on a signal).
inline int waitFor(pid_t pid, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline ProcessResult run(const std::vector<std::string>& argv, const fs::path& out,
                         int seconds = 120) {
  fs::path err = out.string() + ".err";
  pid_t pid = spawn(argv, out, err);
  if (pid < 0)
    return {-1, "cannot start " + argv[0]};
  int code = waitFor(pid, seconds);
  return {code, readFile(err)};
}

} // namespace mlgo::ir2vec::testing

#endif // MLGO_IR2VEC_PROCESS_TEST_UTIL_H
