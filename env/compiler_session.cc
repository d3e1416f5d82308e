//===- env/compiler_session.cc - a compiler process behind a fifo pair ------===//
#include "mlgo/env/compiler_session.h"

#include "compile_util.h"
#include "request_stream.h"
#include "mlgo/env/run_compile.h"
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/support/fifo_channel.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

namespace mlgo::env {
namespace {

using detail::checkExit;
using detail::cpuTime;
using detail::programName;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr size_t kReadChunk = 64 << 10;
/// How long a compiler whose stream broke may take to finish dying.
constexpr auto kExitGrace = std::chrono::milliseconds(250);

class ProcessSession final : public CompilerSession {
public:
  ProcessSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits)
      : dir_(std::move(dir)), command_(std::move(command)), limits_(limits),
        channel_(command_.channelBase.string()),
        requests_(programName(command_), limits.maxObservations) {}

  ~ProcessSession() override { abort(); }

  Status start();

  Result<SessionEvent> next(Observation& observation) override;
  Result<std::optional<SessionEvent>> tryNext(Observation& observation) override;
  int streamFd() const override { return failed_ || finished_ ? -1 : channel_.outFd(); }
  Status answer(std::span<const std::byte> advice) override;
  Result<CompileReport> finish() override;
  void abort() override;

  const protocol::LogHeader* header() const override { return requests_.header(); }
  uint64_t observations() const override { return requests_.observations(); }
  pid_t pid() const override { return process_ ? process_->pid() : -1; }
  std::optional<support::ExitStatus> exitStatus() const override {
    return process_ ? process_->exitStatus() : std::nullopt;
  }
  const CompileCommand& command() const override { return command_; }

private:
  /// next() (`wait`) and tryNext() (not): nullopt only without `wait`.
  Result<std::optional<SessionEvent>> pull(Observation& observation, bool wait);
  Status waitForStream(support::Clock::time_point since);
  Status readStream(bool exited);
  /// Kills the compiler and makes the session failed with `error`. With
  /// `awaitExit` (a broken or ended stream), first gives a dying compiler a
  /// moment to exit, so its exit status can explain the failure.
  Error fail(Error error, bool awaitExit = false);
  /// Whether the owner asked the call in progress to stop.
  bool interrupted() const { return limits_.interrupt != nullptr && limits_.interrupt->requested(); }
  /// The compile timeout's deadline for a wait that began at `since`.
  support::Deadline deadline(support::Clock::time_point since = support::Clock::now()) const;
  void chargeWait(support::Clock::time_point since) {
    compilerTime_ += support::Clock::now() - since;
  }

  support::TempDir dir_;
  CompileCommand command_;
  SessionLimits limits_;
  support::FifoChannel channel_;
  std::unique_ptr<support::Subprocess> process_;
  detail::RequestStream requests_;
  std::FILE* record_ = nullptr;
  support::Clock::time_point started_;
  nanoseconds compilerTime_{0};
  /// Since the last answer, while no request has come back (charged when one
  /// does, by whichever of next() and tryNext() returns it).
  std::optional<support::Clock::time_point> waitingSince_;
  uint64_t bytesReceived_ = 0;
  bool streamEnded_ = false;
  bool ended_ = false;
  bool finished_ = false;
  std::optional<Error> failed_;
};

Status ProcessSession::start() {
  if (!command_.channelBase.empty()) {
    MLGO_TRY(support::FifoChannel::makeFifos(command_.channelBase.string()));
    MLGO_TRY(channel_.open());
  }
  if (!limits_.recordStreamTo.empty()) {
    record_ = std::fopen(limits_.recordStreamTo.c_str(), "wbe");
    if (record_ == nullptr)
      return makeError(ErrorCode::kIo, "cannot write {}: {}", limits_.recordStreamTo.string(),
                       std::strerror(errno));
  }
  started_ = support::Clock::now();
  if (limits_.scope == nullptr)
    return makeError(ErrorCode::kInternal, "a compiler session needs a cleanup scope");
  auto process = support::Subprocess::spawn(
      *limits_.scope,
      {command_.argv, command_.environment, limits_.spawner, command_.inheritOutput});
  if (!process.ok())
    return process.error();
  process_ = std::move(*process);
  return Status::success();
}

support::Deadline ProcessSession::deadline(support::Clock::time_point since) const {
  auto left = limits_.compileTimeout - compilerTime_;
  return since + std::max(duration_cast<nanoseconds>(left), nanoseconds(0));
}

Error ProcessSession::fail(Error error, bool awaitExit) {
  if (failed_)
    return *failed_;
  if (awaitExit && process_)
    (void)process_->waitUntil(support::Clock::now() + kExitGrace);
  // A compiler that died explains a broken stream better than the stream.
  if (process_ && process_->tryReap() && !process_->exitStatus()->success() &&
      error.code() != ErrorCode::kTimeout) {
    error = makeError(ErrorCode::kCompiler, "{} {} after {} observations{}", programName(command_),
                      process_->exitStatus()->describe(), requests_.observations(),
                      outputExcerpt(process_->outputText()));
  }
  abort();
  failed_ = error;
  return error;
}

Status ProcessSession::readStream(bool exited) {
  for (;;) {
    auto buffer = requests_.reader().prepare(kReadChunk);
    ssize_t n = ::read(channel_.outFd(), buffer.data(), buffer.size());
    if (n > 0) {
      bytesReceived_ += static_cast<uint64_t>(n);
      requests_.reader().commit(static_cast<size_t>(n));
      if (record_ != nullptr)
        std::fwrite(buffer.data(), 1, static_cast<size_t>(n), record_);
      if (!exited)
        return Status::success();
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    // End of stream: 0 bytes (all writers gone), or nothing buffered from
    // a compiler that has exited (it may never have opened B.out).
    if (n == 0 || (exited && (errno == EAGAIN || errno == EWOULDBLOCK))) {
      streamEnded_ = true;
      if (bytesReceived_ > 0)
        requests_.reader().finish();
      return Status::success();
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return Status::success();
    return makeError(ErrorCode::kIo, "cannot read {}.out: {}", command_.channelBase.string(),
                     std::strerror(errno));
  }
}

Status ProcessSession::waitForStream(support::Clock::time_point since) {
  support::Deadline limit = deadline(since);
  for (;;) {
    if (process_->reaped())
      return readStream(/*exited=*/true);
    int fds[3] = {channel_.outFd(), process_->outputFd(), process_->exitFd()};
    support::Deadline until = limit;
    if (process_->exitFd() < 0)
      until = std::min(limit, support::Clock::now() + milliseconds(5));
    if (limits_.interrupt != nullptr)
      until = limits_.interrupt->slice(until);
    auto ready = support::waitReadable(fds, until);
    if (!ready.ok())
      return ready.error();
    if (*ready & 2u)
      process_->drainOutput();
    if (*ready & 1u)
      return readStream(/*exited=*/false);
    if ((*ready & 4u) || process_->exitFd() < 0)
      process_->tryReap();
    if (*ready == 0 && interrupted())
      return makeError(ErrorCode::kInterrupted,
                       "{} interrupted while waiting for its next request (after {} "
                       "observations); killed",
                       programName(command_), requests_.observations());
    if (*ready == 0 && support::Clock::now() >= limit) {
      if (bytesReceived_ == 0)
        return makeError(ErrorCode::kTimeout,
                         "{} did not open its channel within the compile timeout of {} ms "
                         "(stopped or stuck); killed",
                         programName(command_), limits_.compileTimeout.count());
      return makeError(ErrorCode::kTimeout,
                       "{} did not answer within the compile timeout of {} ms (after {} "
                       "observations; stopped or stuck); killed",
                       programName(command_), limits_.compileTimeout.count(),
                       requests_.observations());
    }
  }
}

Result<SessionEvent> ProcessSession::next(Observation& observation) {
  auto event = pull(observation, /*wait=*/true);
  if (!event.ok())
    return event.error();
  return **event;
}

Result<std::optional<SessionEvent>> ProcessSession::tryNext(Observation& observation) {
  return pull(observation, /*wait=*/false);
}

Result<std::optional<SessionEvent>> ProcessSession::pull(Observation& observation, bool wait) {
  if (failed_)
    return *failed_;
  MLGO_TRY(requests_.expectNext());
  if (ended_)
    return std::optional(SessionEvent::kEnd);
  auto since = waitingSince_.value_or(support::Clock::now());
  waitingSince_.reset();
  if (command_.channelBase.empty()) {
    ended_ = true;
    return std::optional(SessionEvent::kEnd);
  }
  for (;;) {
    auto next = requests_.advance(observation);
    if (next.ok() && *next == detail::RequestStream::Next::kNeedMore && !streamEnded_) {
      uint64_t before = bytesReceived_;
      // Not waiting: one read, then parse; a read that would return EAGAIN
      // after a complete request is a system call per step for nothing.
      auto st = wait ? waitForStream(since) : readStream(/*exited=*/false);
      if (st.ok() && !wait && bytesReceived_ == before && !streamEnded_) {
        waitingSince_ = since; // Still waiting; charged when the request comes.
        return std::optional<SessionEvent>();
      }
      if (st.ok())
        continue;
      next = st.error();
    }
    chargeWait(since);
    if (!next.ok())
      return fail(next.error(), /*awaitExit=*/requests_.malformed());
    if (*next == detail::RequestStream::Next::kObservation)
      return std::optional(SessionEvent::kObservation);
    // The end, or a stream that ended without a record: the channel was never used.
    ended_ = true;
    return std::optional(SessionEvent::kEnd);
  }
}

Status ProcessSession::answer(std::span<const std::byte> advice) {
  if (failed_)
    return *failed_;
  if (auto st = requests_.checkAnswer(advice); !st.ok())
    return st.error().code() == ErrorCode::kCompiler ? Status(fail(st.error())) : st;
  auto st = channel_.write(advice);
  if (!st.ok())
    return fail(st.error());
  requests_.answered();
  waitingSince_ = support::Clock::now();
  return Status::success();
}

Result<CompileReport> ProcessSession::finish() {
  if (failed_)
    return *failed_;
  if (!ended_ || finished_)
    return makeError(ErrorCode::kInternal, "finish() needs a session whose stream has ended");
  auto since = support::Clock::now();
  Status st = Status::success();
  for (;;) {
    support::Deadline limit = deadline(since);
    st = process_->waitUntil(limits_.interrupt ? limits_.interrupt->slice(limit) : limit);
    if (st.ok() || st.error().code() != ErrorCode::kTimeout || support::Clock::now() >= limit)
      break;
    if (interrupted()) {
      chargeWait(since);
      return fail(makeError(ErrorCode::kInterrupted,
                            "{} interrupted while waiting for it to finish; killed",
                            programName(command_)));
    }
  }
  chargeWait(since);
  if (!st.ok())
    return fail(makeError(ErrorCode::kTimeout,
                          "{} did not finish within the compile timeout of {} ms; killed",
                          programName(command_), limits_.compileTimeout.count()));
  CompileReport report;
  report.exit = *process_->exitStatus();
  report.output = process_->outputText();
  auto exitStatus = checkExit(command_, *process_, report.output);
  if (!exitStatus.ok())
    return fail(exitStatus.error());
  finished_ = true;
  report.observations = requests_.observations();
  report.contexts = requests_.contexts();
  report.channelOpened = requests_.channelOpened();
  report.wallTime = support::Clock::now() - started_;
  report.compilerTime = compilerTime_;
  report.compilerCpu = cpuTime(process_->usage());
  channel_.close();
  if (record_ != nullptr) {
    std::fclose(record_);
    record_ = nullptr;
  }
  return report;
}

void ProcessSession::abort() {
  if (process_)
    process_->kill();
  channel_.close();
  if (record_ != nullptr) {
    std::fclose(record_);
    record_ = nullptr;
  }
}

} // namespace

Result<std::optional<SessionEvent>> CompilerSession::tryNext(Observation&) {
  return makeError(ErrorCode::kInternal, "this compiler session cannot be polled (no streamFd)");
}

Result<std::unique_ptr<CompilerSession>>
startCompilerSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits) {
  auto session = std::make_unique<ProcessSession>(std::move(dir), std::move(command), limits);
  MLGO_TRY(session->start());
  return std::unique_ptr<CompilerSession>(std::move(session));
}

} // namespace mlgo::env
