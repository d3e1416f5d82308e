//===- env/compiler_session.cc - a compiler process behind fifo pairs ------===//
#include "mlgo/env/compiler_session.h"

#include "compile_util.h"
#include "mlgo/env/run_compile.h"
#include "session_channel.h"

#include <algorithm>
#include <array>
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

/// How long a compiler whose stream broke may take to finish dying.
constexpr auto kExitGrace = std::chrono::milliseconds(250);

class ProcessSession final : public CompilerSession {
public:
  ProcessSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits)
      : dir_(std::move(dir)), command_(std::move(command)), limits_(limits) {}

  ~ProcessSession() override { abort(); }

  Status start();

  Result<SessionEvent> next(Observation& observation) override;
  Result<std::optional<SessionEvent>> tryNext(Observation& observation) override;
  int streamFd() const override {
    return failed_ || finished_ || channels_.size() != 1 ? -1 : channels_[0].outFd();
  }
  Status answer(std::span<const std::byte> advice) override;
  Result<CompileReport> finish() override;
  void abort() override;

  const protocol::LogHeader* header() const override { return channelHeader(0); }
  const protocol::LogHeader* channelHeader(size_t channel) const override {
    return channel < channels_.size() ? channels_[channel].requests().header() : nullptr;
  }
  uint64_t observations() const override { return channels_.observations(); }
  pid_t pid() const override { return process_ ? process_->pid() : -1; }
  std::optional<support::ExitStatus> exitStatus() const override {
    return process_ ? process_->exitStatus() : std::nullopt;
  }
  const CompileCommand& command() const override { return command_; }

private:
  /// next() (`wait`) and tryNext() (not): nullopt only without `wait`.
  Result<std::optional<SessionEvent>> pull(Observation& observation, bool wait);
  /// One look at the channels without waiting (tryNext()).
  Status readNow();
  Status waitForStream(support::Clock::time_point since);
  Error timedOut() const;
  /// finish()'s wait for the compiler's exit (no charge, no failing).
  Status awaitExit(support::Clock::time_point since);
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
  detail::SessionChannels channels_;
  std::unique_ptr<support::Subprocess> process_;
  support::Clock::time_point started_;
  nanoseconds compilerTime_{0};
  /// Since the last answer, while no request has come back (charged when one
  /// does, by whichever of next() and tryNext() returns it).
  std::optional<support::Clock::time_point> waitingSince_;
  bool ended_ = false;
  bool finished_ = false;
  std::optional<Error> failed_;
};

Status ProcessSession::start() {
  MLGO_TRY(channels_.open(command_, limits_, programName(command_)));
  if (channels_.empty() && !limits_.recordStreamTo.empty()) {
    // A plain compile records nothing, into an empty file.
    std::FILE* record = std::fopen(limits_.recordStreamTo.c_str(), "wbe");
    if (record == nullptr)
      return makeError(ErrorCode::kIo, "cannot write {}: {}", limits_.recordStreamTo.string(),
                       std::strerror(errno));
    std::fclose(record);
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
                      process_->exitStatus()->describe(), channels_.observations(),
                      outputExcerpt(process_->outputText()));
  }
  abort();
  failed_ = error;
  return error;
}

Status ProcessSession::readNow() {
  // One channel: one read, as ever (a poll first would cost a system call).
  if (channels_.size() == 1)
    return channels_[0].read(/*exited=*/false);
  if (process_->reaped())
    return channels_.readReady(~0u, /*exited=*/true);
  return channels_.readNow();
}

Status ProcessSession::waitForStream(support::Clock::time_point since) {
  support::Deadline limit = deadline(since);
  size_t n = channels_.size();
  for (;;) {
    if (process_->reaped())
      return channels_.readReady(~0u, /*exited=*/true);
    // Bit i < n: channel i's B.out; bit n: the compiler's output; n + 1: its exit.
    std::array<int, kMaxExtraChannels + 3> fds;
    channels_.pollFds(fds);
    fds[n] = process_->outputFd();
    fds[n + 1] = process_->exitFd();
    support::Deadline until = limit;
    if (process_->exitFd() < 0)
      until = std::min(limit, support::Clock::now() + milliseconds(5));
    if (limits_.interrupt != nullptr)
      until = limits_.interrupt->slice(until);
    auto ready = support::waitReadable(std::span(fds.data(), n + 2), until);
    if (!ready.ok())
      return ready.error();
    if (*ready & (1u << n))
      process_->drainOutput();
    if (unsigned streams = *ready & ((1u << n) - 1); streams != 0)
      return channels_.readReady(streams, /*exited=*/false);
    if ((*ready & (2u << n)) || process_->exitFd() < 0)
      process_->tryReap();
    if (*ready == 0 && interrupted())
      return makeError(ErrorCode::kInterrupted,
                       "{} interrupted while waiting for its next request (after {} "
                       "observations); killed",
                       programName(command_), channels_.observations());
    if (*ready == 0 && support::Clock::now() >= limit)
      return timedOut();
  }
}

Error ProcessSession::timedOut() const {
  if (channels_.bytesReceived() == 0)
    return makeError(ErrorCode::kTimeout,
                     "{} did not open its channel within the compile timeout of {} ms "
                     "(stopped or stuck); killed",
                     programName(command_), limits_.compileTimeout.count());
  return makeError(ErrorCode::kTimeout,
                   "{} did not answer within the compile timeout of {} ms (after {} "
                   "observations; stopped or stuck); killed",
                   programName(command_), limits_.compileTimeout.count(), channels_.observations());
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
  for (size_t i = 0; i < channels_.size(); ++i)
    MLGO_TRY(channels_[i].requests().expectNext());
  if (ended_)
    return std::optional(SessionEvent::kEnd);
  auto since = waitingSince_.value_or(support::Clock::now());
  waitingSince_.reset();
  if (channels_.empty()) {
    ended_ = true;
    return std::optional(SessionEvent::kEnd);
  }
  for (;;) {
    auto found = channels_.advanceAll(observation);
    if (found.ok() && !*found && !channels_.allDone()) {
      uint64_t before = channels_.progress();
      // Not waiting: one look, then parse; a read that would return EAGAIN
      // after a complete request is a system call per step for nothing.
      auto st = wait ? waitForStream(since) : readNow();
      if (st.ok() && !wait && channels_.progress() == before) {
        waitingSince_ = since; // Still waiting; charged when the request comes.
        return std::optional<SessionEvent>();
      }
      if (st.ok())
        continue;
      found = st.error();
    }
    chargeWait(since);
    if (!found.ok())
      return fail(found.error(), /*awaitExit=*/channels_.anyMalformed());
    if (*found)
      return std::optional(SessionEvent::kObservation);
    // Every channel ended (or, never opened, ended with the compiler).
    ended_ = true;
    return std::optional(SessionEvent::kEnd);
  }
}

Status ProcessSession::answer(std::span<const std::byte> advice) {
  if (failed_)
    return *failed_;
  if (channels_.empty())
    return makeError(ErrorCode::kInvalidArgument, "there is no decision request to answer");
  size_t pending = channels_.pending().value_or(0);
  detail::SessionChannel& channel = channels_[pending];
  if (auto st = channel.requests().checkAnswer(advice); !st.ok())
    return st.error().code() == ErrorCode::kCompiler ? Status(fail(st.error())) : st;
  if (channels_.size() > 1) {
    if (auto st = channels_.checkOthersQuiet(pending); !st.ok())
      return fail(st.error(), /*awaitExit=*/channels_.anyMalformed());
  }
  auto st = channel.write(advice);
  if (!st.ok())
    return fail(st.error());
  channel.requests().answered();
  waitingSince_ = support::Clock::now();
  return Status::success();
}

Status ProcessSession::awaitExit(support::Clock::time_point since) {
  Status st = Status::success();
  for (;;) {
    support::Deadline limit = deadline(since);
    st = process_->waitUntil(limits_.interrupt ? limits_.interrupt->slice(limit) : limit);
    if (st.ok() || st.error().code() != ErrorCode::kTimeout || support::Clock::now() >= limit)
      break;
    if (interrupted())
      return makeError(ErrorCode::kInterrupted,
                       "{} interrupted while waiting for it to finish; killed",
                       programName(command_));
  }
  if (!st.ok())
    return makeError(ErrorCode::kTimeout,
                     "{} did not finish within the compile timeout of {} ms; killed",
                     programName(command_), limits_.compileTimeout.count());
  return Status::success();
}

Result<CompileReport> ProcessSession::finish() {
  if (failed_)
    return *failed_;
  if (!ended_ || finished_)
    return makeError(ErrorCode::kInternal, "finish() needs a session whose stream has ended");
  auto since = support::Clock::now();
  Status exited = awaitExit(since);
  chargeWait(since);
  if (!exited.ok())
    return fail(exited.error());
  CompileReport report;
  report.exit = *process_->exitStatus();
  report.output = process_->outputText();
  auto exitStatus = checkExit(command_, *process_, report.output);
  if (!exitStatus.ok())
    return fail(exitStatus.error());
  finished_ = true;
  channels_.fillReport(report);
  report.wallTime = support::Clock::now() - started_;
  report.compilerTime = compilerTime_;
  report.compilerCpu = cpuTime(process_->usage());
  channels_.close();
  return report;
}

void ProcessSession::abort() {
  if (process_)
    process_->kill();
  channels_.close();
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
