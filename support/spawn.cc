//===- support/spawn.cc - starting children that die with us --------------===//
#include "mlgo/support/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace mlgo::support {

struct Spawner::Job {
  const SpawnRequest* request = nullptr;
  std::optional<Result<pid_t>> result;
  std::condition_variable done;
};

namespace {

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  result.reserve(strings.size() + 1);
  for (const std::string& s : strings)
    result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

bool isExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

/// The file to execve for `program`: itself when it has a '/', else the
/// first executable `<dir>/<program>` along the host's PATH.
Result<std::string> resolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return program;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + program;
    if (isExecutableFile(candidate))
      return candidate;
    if (colon == std::string_view::npos)
      break;
    dirs.remove_prefix(colon + 1);
  }
  return makeError(ErrorCode::kNotFound, "cannot run '{}': not found in PATH", program);
}

[[noreturn]] void childFailed(volatile int* error, int code) {
  *error = code != 0 ? code : EINVAL;
  ::_exit(127);
}

/// Runs in the vfork()ed child: only system calls, never returns. On a
/// failure stores errno in `*error` (memory shared with the parent until
/// exec) and exits with 127.
[[noreturn]] void becomeChild(const char* path, char* const* argv, char* const* envp, int outputFd,
                              int errorFd, pid_t host, volatile int* error) {
  auto failWith = [error](int code) { childFailed(error, code); };
  // Dies with the spawner thread. If the host died before this took
  // effect, we were reparented already: nobody would ever kill us.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    failWith(errno);
  if (::getppid() != host)
    ::_exit(127);
  if (::setpgid(0, 0) != 0)
    failWith(errno);
  // Out of the way of the dup2()s below first (either may be 0, 1 or 2).
  int out = outputFd;
  if (out <= STDERR_FILENO && (out = ::fcntl(outputFd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) < 0)
    failWith(errno);
  int err = out;
  if (errorFd >= 0 && (err = ::fcntl(errorFd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) < 0)
    failWith(errno);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 ||
      ::dup2(err, STDERR_FILENO) < 0)
    failWith(errno);
  if (::close_range(STDERR_FILENO + 1, ~0U, 0) != 0) {
    struct rlimit limit;
    rlim_t top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    for (rlim_t fd = STDERR_FILENO + 1; fd < top && fd < (1u << 20); ++fd)
      ::close(static_cast<int>(fd));
  }
  struct sigaction defaults;
  std::memset(&defaults, 0, sizeof defaults);
  defaults.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP)
      ::sigaction(sig, &defaults, nullptr); // glibc's internal ones fail: fine.
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  ::execve(path, argv, envp);
  childFailed(error, errno);
}

Result<pid_t> spawnNow(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv[0].empty())
    return makeError(ErrorCode::kInvalidArgument, "cannot start a process: empty command line");
  const std::string& program = request.argv[0];
  auto path = resolveProgram(program);
  if (!path.ok())
    return path.error();
  std::vector<char*> argv = pointers(request.argv);
  std::vector<char*> envp = pointers(request.environment);
  pid_t host = ::getpid();
  volatile int childError = 0;
  pid_t pid = ::vfork();
  if (pid == 0)
    becomeChild(path->c_str(), argv.data(), envp.data(), request.outputFd, request.errorFd, host,
                &childError);
  if (pid < 0)
    return makeError(ErrorCode::kIo, "cannot run '{}': fork: {}", program, std::strerror(errno));
  if (childError != 0) {
    int error = childError;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    ErrorCode code = (error == ENOENT || error == ENOTDIR) ? ErrorCode::kNotFound : ErrorCode::kIo;
    return makeError(code, "cannot run '{}': {}", program, std::strerror(error));
  }
  return pid;
}

} // namespace

Spawner::Spawner() : thread_([this] { loop(); }) {}

Spawner::~Spawner() {
  stop();
}

void Spawner::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  std::call_once(joined_, [this] { thread_.join(); });
}

Result<pid_t> Spawner::spawn(const SpawnRequest& request) {
  Job job;
  job.request = &request;
  std::unique_lock lock(mutex_);
  if (stopping_)
    return makeError(ErrorCode::kIo, "cannot run a process: the spawner is stopping");
  queue_.push_back(&job);
  wake_.notify_all();
  job.done.wait(lock, [&] { return job.result.has_value(); });
  return std::move(*job.result);
}

void Spawner::loop() {
  // No handler of the host may run in a vfork()ed child (it shares our
  // memory): this thread never takes a signal.
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // Stopping with nothing left to start.
    Job* job = queue_.front();
    queue_.pop_front();
    lock.unlock();
    auto result = spawnNow(*job->request);
    lock.lock();
    job->result.emplace(std::move(result));
    job->done.notify_all();
  }
}

} // namespace mlgo::support
