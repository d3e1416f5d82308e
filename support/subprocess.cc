//===- support/subprocess.cc - a child process we own ---------------------===//
#include "mlgo/support/subprocess.h"

#include "child_wait.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

extern char** environ;

namespace mlgo::support {
namespace {

/// How often a wait re-checks the child when there is no pidfd.
constexpr auto kNoPidfdPollInterval = std::chrono::milliseconds(5);

std::string errnoText(int error) {
  return std::strerror(error);
}

int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -1 : static_cast<int>(fd);
#else
  (void)pid;
  return -1;
#endif
}

/// The environment for the child: the host's, with `extra` overriding.
std::vector<std::string> childEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
      return std::string_view(x).substr(0, x.find('=')) == name;
    });
    if (!overridden)
      env.emplace_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

} // namespace

//===-- OutputBuffer ------------------------------------------------------===//

OutputBuffer::OutputBuffer(size_t headLimit, size_t tailLimit)
    : headLimit_(headLimit), tailLimit_(tailLimit) {}

void OutputBuffer::append(std::string_view bytes) {
  total_ += bytes.size();
  size_t toHead = std::min(bytes.size(), headLimit_ - head_.size());
  head_.append(bytes.substr(0, toHead));
  bytes.remove_prefix(toHead);
  if (bytes.empty() || tailLimit_ == 0)
    return;
  if (bytes.size() >= tailLimit_) {
    tail_.assign(bytes.substr(bytes.size() - tailLimit_));
    tailStart_ = 0;
    return;
  }
  for (char c : bytes) {
    if (tail_.size() < tailLimit_) {
      tail_.push_back(c);
    } else {
      tail_[tailStart_] = c;
      tailStart_ = (tailStart_ + 1) % tailLimit_;
    }
  }
}

std::string OutputBuffer::text() const {
  std::string result = head_;
  uint64_t dropped = total_ - head_.size() - tail_.size();
  if (dropped > 0)
    result += fmt::format("\n[... {} bytes of output omitted ...]\n", dropped);
  result.append(tail_, tailStart_, std::string::npos);
  result.append(tail_, 0, tailStart_);
  return result;
}

//===-- ExitStatus --------------------------------------------------------===//

std::string ExitStatus::describe() const {
  if (exited)
    return fmt::format("exited with code {}", code);
  const char* name = ::strsignal(signal);
  return fmt::format("killed by signal {} ({})", signal, name != nullptr ? name : "unknown");
}

//===-- Subprocess --------------------------------------------------------===//

Result<std::unique_ptr<Subprocess>> Subprocess::spawn(CleanupScope& scope,
                                                     const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty())
    return makeError(ErrorCode::kInvalidArgument, "cannot start a process: empty command line");
  const std::string& program = options.argv[0];

  int pipeFds[2] = {-1, -1};
  if (!options.inheritOutput && ::pipe2(pipeFds, O_CLOEXEC) != 0)
    return makeError(ErrorCode::kIo, "cannot start '{}': pipe: {}", program, errnoText(errno));
  std::unique_ptr<Subprocess> child(new Subprocess());
  child->scope_ = &scope;
  child->program_ = program;
  child->outputFd_ = pipeFds[0];

  SpawnRequest request;
  request.argv = options.argv;
  request.environment = childEnvironment(options.extraEnvironment);
  request.outputFd = options.inheritOutput ? STDOUT_FILENO : pipeFds[1];
  request.errorFd = options.inheritOutput ? STDERR_FILENO : -1;
  Spawner& spawner = options.spawner != nullptr ? *options.spawner : scope.spawner();

  if (Status admitted = scope.beginSpawn(program); !admitted.ok()) {
    if (pipeFds[1] >= 0)
      ::close(pipeFds[1]);
    return admitted.error();
  }
  auto spawned = spawner.spawn(request);
  if (pipeFds[1] >= 0)
    ::close(pipeFds[1]);
  // Registered before the scope's cleanup() can look (it waits for spawns
  // under way), so a child started during a cleanup is killed too.
  scope.endSpawn(spawned.ok() ? *spawned : -1);
  if (!spawned.ok())
    return spawned.error();
  child->pid_ = *spawned;
  child->exitFd_ = openPidfd(child->pid_);
  if (child->outputFd_ >= 0)
    ::fcntl(child->outputFd_, F_SETFL, ::fcntl(child->outputFd_, F_GETFL) | O_NONBLOCK);
  return child;
}

Subprocess::~Subprocess() {
  kill();
  closeOutput();
  if (exitFd_ >= 0)
    ::close(exitFd_);
}

void Subprocess::closeOutput() {
  if (outputFd_ >= 0) {
    ::close(outputFd_);
    outputFd_ = -1;
  }
}

void Subprocess::drainOutput() {
  char buffer[16384];
  while (outputFd_ >= 0) {
    ssize_t n = ::read(outputFd_, buffer, sizeof buffer);
    if (n > 0) {
      output_.append(std::string_view(buffer, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
      closeOutput();
    return;
  }
}

bool Subprocess::tryReap() {
  if (status_)
    return true;
  int raw = 0;
  struct rusage usage = {};
  // Reaped and unregistered at once: the scope's cleanup() never signals a
  // pid that was reaped (and may have been recycled).
  pid_t r = scope_->reapChild(pid_, &raw, &usage);
  if (r == 0)
    return false;
  ExitStatus status;
  if (r < 0) {
    // Someone else reaped it (e.g. SIGCHLD set to SIG_IGN by the host).
    status.exited = true;
    status.code = -1;
  } else if (WIFEXITED(raw)) {
    status.exited = true;
    status.code = WEXITSTATUS(raw);
  } else {
    status.signal = WIFSIGNALED(raw) ? WTERMSIG(raw) : 0;
  }
  usage_ = usage;
  status_ = status;
  return true;
}

Status Subprocess::waitUntil(Deadline deadline) {
  while (!tryReap()) {
    auto now = Clock::now();
    if (now >= deadline)
      return makeError(ErrorCode::kTimeout, "'{}' (pid {}) did not exit in time", program_, pid_);
    Deadline next = exitFd_ >= 0 ? deadline : std::min(deadline, now + kNoPidfdPollInterval);
    int fds[2] = {exitFd_, outputFd_};
    auto ready = waitReadable(fds, next);
    if (!ready.ok())
      return ready.error();
    if (*ready & 2u)
      drainOutput();
  }
  drainOutput();
  return Status::success();
}

void Subprocess::signalGroup(int signal) {
  if (!status_ && pid_ > 0)
    ::killpg(pid_, signal);
}

void Subprocess::kill() {
  if (status_ || pid_ <= 0)
    return;
  signalGroup(SIGKILL);
  // A SIGKILLed child dies promptly (also when stopped). Wait for that
  // without reaping; tryReap() then reaps it and unregisters it under the
  // scope's lock. It stays registered until reaped, so a cleanup waits for
  // it too.
  if (exitFd_ >= 0) {
    struct pollfd exited = {exitFd_, POLLIN, 0}; // Readable once it is dead.
    while (::poll(&exited, 1, -1) < 0 && errno == EINTR) {
    }
  }
  while (!tryReap())
    waitForDeath(pid_, Clock::now() + std::chrono::hours(1));
}

std::string Subprocess::outputText() {
  drainOutput();
  return output_.text();
}

//===-- waitReadable ------------------------------------------------------===//

Result<unsigned> waitReadable(std::span<const int> fds, Deadline deadline) {
  constexpr size_t kMax = 8;
  if (fds.size() > kMax)
    return makeError(ErrorCode::kInternal, "waitReadable: too many descriptors ({})", fds.size());
  struct pollfd pfds[kMax];
  size_t index[kMax];
  nfds_t count = 0;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i] < 0)
      continue;
    pfds[count] = {fds[i], POLLIN, 0};
    index[count] = i;
    ++count;
  }
  for (;;) {
    auto now = Clock::now();
    auto left = deadline > now ? deadline - now : Clock::duration::zero();
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
    auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(left - secs);
    struct timespec ts = {static_cast<time_t>(secs.count()), static_cast<long>(nanos.count())};
    int n = ::ppoll(pfds, count, &ts, nullptr);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(ErrorCode::kIo, "poll: {}", errnoText(errno));
    unsigned mask = 0;
    for (nfds_t k = 0; k < count; ++k)
      if (pfds[k].revents != 0)
        mask |= 1u << index[k];
    return mask;
  }
}

} // namespace mlgo::support
