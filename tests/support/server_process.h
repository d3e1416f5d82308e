//===- tests/support/server_process.h - mlgo-env serve as a child -*- C++ -*-===//
///
/// \file
/// Test helpers: runs `mlgo-env serve` as a child process on a Unix socket in
/// a private temp directory, and a blocking line client for it.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_SERVER_PROCESS_H
#define MLGO_TESTS_SUPPORT_SERVER_PROCESS_H

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mlgo::testing {

/// A blocking newline-delimited client over a connected socket.
class LineClient {
public:
  explicit LineClient(int fd = -1) : fd_(fd) {}
  LineClient(LineClient&& o) noexcept : fd_(o.fd_), buffer_(std::move(o.buffer_)) { o.fd_ = -1; }
  LineClient& operator=(LineClient&& o) noexcept {
    if (this != &o) {
      close();
      fd_ = o.fd_;
      buffer_ = std::move(o.buffer_);
      o.fd_ = -1;
    }
    return *this;
  }
  ~LineClient() { close(); }

  static LineClient connectUnix(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      fd = -1;
    }
    return LineClient(fd);
  }

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  /// Reads give up (readLine() returns nullopt) after `timeout` without data.
  void setReceiveTimeout(std::chrono::milliseconds timeout) {
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  bool send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  bool sendLine(std::string line) { return send(line + "\n"); }

  /// The next line without its newline; empty optional at EOF.
  std::optional<std::string> readLine() {
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      char chunk[65536];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0)
        return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  /// Exactly `size` bytes (a binary observation's frame); empty optional at EOF.
  std::optional<std::string> readBytes(size_t size) {
    while (buffer_.size() < size) {
      char chunk[65536];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0)
        return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    std::string bytes = buffer_.substr(0, size);
    buffer_.erase(0, size);
    return bytes;
  }

  std::string call(const std::string& line) {
    if (!sendLine(line))
      return "<send failed>";
    return readLine().value_or("<eof>");
  }

  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_;
  std::string buffer_;
};

/// `mlgo-env serve --listen=unix:<tmp>/s.sock <args>`; stops it (SIGTERM) on
/// destruction.
class ServerProcess {
public:
  /// `environment`: "NAME=VALUE" entries overriding the test's own.
  /// `launcher`: a command that execs the server with its arguments appended
  /// (e.g. {"/bin/sh", "-c", "ulimit -n 200; exec \"$0\" \"$@\""}).
  explicit ServerProcess(std::vector<std::string> args,
                         const std::vector<std::string>& environment = {},
                         const std::vector<std::string>& launcher = {}) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mlgo-srv-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      return;
    dir_ = tmpl;
    socket_ = (dir_ / "s.sock").string();
    log_ = (dir_ / "stderr.log").string();
    std::vector<std::string> argv = {MLGO_ENV_EXE, "serve", "--listen=unix:" + socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.begin(), launcher.begin(), launcher.end());
    std::vector<char*> raw;
    for (auto& a : argv)
      raw.push_back(a.data());
    raw.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> envStrings;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view entry(*e);
      bool overridden = false;
      for (const std::string& x : environment)
        overridden |= entry.substr(0, entry.find('=') + 1) == x.substr(0, x.find('=') + 1);
      if (!overridden)
        envStrings.emplace_back(entry);
    }
    envStrings.insert(envStrings.end(), environment.begin(), environment.end());
    std::vector<char*> envp;
    for (auto& e : envStrings)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    if (posix_spawn(&pid_, raw[0], &actions, nullptr, raw.data(), envp.data()) != 0)
      pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      if (log().find("listening on") != std::string::npos)
        return;
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exitStatus_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  ~ServerProcess() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool running() const { return pid_ > 0; }
  /// Waits for a server that exits by itself (e.g. refusing to start).
  int exitCode() const { return exitStatus_; }
  pid_t pid() const { return pid_; }
  const std::string& socketPath() const { return socket_; }
  LineClient connect() const { return LineClient::connectUnix(socket_); }

  std::string log() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  /// SIGTERM, then wait; returns the exit status (or -1).
  int stop() {
    if (pid_ <= 0)
      return exitStatus_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exitStatus_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exitStatus_;
  }

  /// SIGTERM, then waits at most `limit`: how long the server took to exit,
  /// or nullopt if it had not (it is then SIGKILLed and reaped).
  std::optional<std::chrono::milliseconds> terminate(std::chrono::milliseconds limit) {
    if (pid_ <= 0)
      return std::nullopt;
    auto start = std::chrono::steady_clock::now();
    ::kill(pid_, SIGTERM);
    for (;;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exitStatus_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
      }
      if (std::chrono::steady_clock::now() - start > limit) {
        killHard();
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  /// SIGKILL (no clean-up possible), then reap; returns true once reaped.
  bool killHard() {
    if (pid_ <= 0)
      return false;
    ::kill(pid_, SIGKILL);
    int status = 0;
    bool reaped = ::waitpid(pid_, &status, 0) == pid_;
    pid_ = -1;
    return reaped;
  }

  /// Child processes of the server (its clang compiles).
  std::vector<pid_t> children() const {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& task :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
      std::ifstream in(task.path() / "children");
      pid_t child;
      while (in >> child)
        out.push_back(child);
    }
    return out;
  }

private:
  std::filesystem::path dir_;
  std::string socket_, log_;
  pid_t pid_ = -1;
  int exitStatus_ = -1;
};

} // namespace mlgo::testing

#endif // MLGO_TESTS_SUPPORT_SERVER_PROCESS_H
