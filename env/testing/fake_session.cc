//===- env/testing/fake_session.cc - one replayed compile -----------------===//
#include "fake_session.h"

#include "mlgo/protocol/stream_reader.h"
#include "request_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace mlgo::env::testing {
namespace {

using Clock = std::chrono::steady_clock;

/// Where each observation record of a recorded stream starts and ends.
struct Layout {
  std::vector<size_t> starts, ends;
  std::optional<Error> error;
};

Layout layoutOf(const std::string& stream) {
  Layout layout;
  protocol::StreamReader reader;
  reader.feed(stream);
  reader.finish();
  protocol::LogEvent event;
  for (;;) {
    auto status = reader.next(event);
    if (!status.ok()) {
      layout.error = status.error().withContext("the recorded stream");
      return layout;
    }
    if (*status != protocol::ReadStatus::kEvent)
      return layout;
    if (event.kind == protocol::EventKind::kObservation) {
      layout.starts.push_back(event.offset);
      layout.ends.push_back(reader.offset());
    }
  }
}

class FakeSession final : public CompilerSession {
public:
  FakeSession(std::shared_ptr<FakeDriver::State> state, support::TempDir dir,
              CompileCommand command, const SessionLimits& limits, FakeModule module)
      : state_(std::move(state)), dir_(std::move(dir)), command_(std::move(command)),
        limits_(limits), module_(std::move(module)), layout_(layoutOf(module_.stream)),
        started_(Clock::now()), requests_("fake compiler", limits.maxObservations) {
    if (module_.fault == FakeFault::kNeverOpen)
      eof_ = true;
  }
  ~FakeSession() override {
    std::lock_guard lock(state_->mutex);
    --state_->live;
  }

  Result<SessionEvent> next(Observation& observation) override;
  Status answer(std::span<const std::byte> advice) override;
  Result<CompileReport> finish() override;
  void abort() override {
    if (!failed_ && !finished_)
      failed_ = makeError(ErrorCode::kCompiler, "fake compiler killed");
  }

  const protocol::LogHeader* header() const override { return requests_.header(); }
  uint64_t observations() const override { return requests_.observations(); }
  pid_t pid() const override { return -1; }
  const CompileCommand& command() const override { return command_; }

private:
  /// The fake compiler runs until it would wait for an answer (or ends).
  Status compilerRuns();
  /// Writes the recording up to `end` (no further than it goes).
  void write(size_t end) {
    end = std::min(end, module_.stream.size());
    if (end > written_)
      requests_.reader().feed(std::string_view(module_.stream).substr(written_, end - written_));
    written_ = std::max(written_, end);
  }
  /// The compiler closes its end of the channel.
  void closeChannel() {
    eof_ = true;
    if (written_ > 0)
      requests_.reader().finish();
  }
  Error fail(Error error) {
    if (!failed_)
      failed_ = std::move(error);
    return *failed_;
  }

  std::shared_ptr<FakeDriver::State> state_;
  support::TempDir dir_;
  CompileCommand command_;
  SessionLimits limits_;
  FakeModule module_;
  Layout layout_;
  Clock::time_point started_;
  Clock::duration waited_{0};
  detail::RequestStream requests_;
  size_t written_ = 0;
  bool eof_ = false;
  bool hanging_ = false;
  bool died_ = false;
  bool faulted_ = false;
  bool ended_ = false;
  bool finished_ = false;
  std::vector<std::vector<std::byte>> answers_;
  std::optional<Error> failed_;
};

Status FakeSession::compilerRuns() {
  if (layout_.error)
    return makeError(ErrorCode::kInternal, "{}", layout_.error->message());
  if (hanging_) {
    auto since = Clock::now();
    bool woken = hangUntil(*state_, since + limits_.compileTimeout - waited_, limits_.cancel);
    waited_ += Clock::now() - since;
    if (woken)
      return makeError(ErrorCode::kCompiler, "fake compiler killed while it hung");
    return makeError(ErrorCode::kTimeout,
                     "fake compiler did not answer within the compile timeout of {} ms (after {} "
                     "observations; stopped or stuck); killed",
                     limits_.compileTimeout.count(), requests_.observations());
  }
  const size_t n = layout_.starts.size();
  const size_t k = answers_.size();
  const bool atFault = module_.fault != FakeFault::kNone && !faulted_ &&
                       k == std::min<uint64_t>(module_.faultAfter, n);
  if (!atFault || module_.fault == FakeFault::kExitCode) {
    write(k < n ? layout_.ends[k] : module_.stream.size());
    if (written_ == module_.stream.size())
      closeChannel();
    return Status::success();
  }
  faulted_ = true;
  const size_t start = k < n ? layout_.starts[k] : module_.stream.size();
  switch (module_.fault) {
  case FakeFault::kTruncate:
    write(k < n ? start + (layout_.ends[k] - start) / 2 : module_.stream.size() - 1);
    closeChannel();
    break;
  case FakeFault::kMalformed:
    write(start);
    requests_.reader().feed(std::string_view("this is not a record\n"));
    written_ = std::max<size_t>(written_, 1);
    closeChannel();
    break;
  case FakeFault::kDie:
    write(start);
    died_ = true;
    closeChannel();
    break;
  case FakeFault::kHang:
    write(start);
    hanging_ = true;
    break;
  default:
    break;
  }
  return Status::success();
}

Result<SessionEvent> FakeSession::next(Observation& observation) {
  if (failed_)
    return *failed_;
  MLGO_TRY(requests_.expectNext());
  if (ended_)
    return SessionEvent::kEnd;
  for (;;) {
    auto next = requests_.advance(observation);
    if (!next.ok())
      return fail(next.error());
    if (*next == detail::RequestStream::Next::kObservation) {
      observation.channel = 0; // One channel, as the real session says.
      return SessionEvent::kObservation;
    }
    if (*next == detail::RequestStream::Next::kNeedMore && !eof_) {
      if (auto st = compilerRuns(); !st.ok())
        return fail(st.error());
      continue;
    }
    ended_ = true; // The end, or a channel never written to.
    return SessionEvent::kEnd;
  }
}

Status FakeSession::answer(std::span<const std::byte> advice) {
  if (failed_)
    return *failed_;
  if (auto st = requests_.checkAnswer(advice); !st.ok())
    return st.error().code() == ErrorCode::kCompiler ? Status(fail(st.error())) : st;
  answers_.emplace_back(advice.begin(), advice.end());
  requests_.answered();
  std::lock_guard lock(state_->mutex);
  ++state_->answers;
  return Status::success();
}

Result<CompileReport> FakeSession::finish() {
  if (failed_)
    return *failed_;
  if (!ended_ || finished_)
    return makeError(ErrorCode::kInternal, "finish() needs a session whose stream has ended");
  CompileReport report;
  if (died_) {
    report.exit.signal = 11;
    return fail(makeError(ErrorCode::kCompiler, "fake compiler {} after {} observations",
                          report.exit.describe(), requests_.observations()));
  }
  report.exit.exited = true;
  if (module_.fault == FakeFault::kExitCode) {
    report.exit.code = 1;
    return fail(makeError(ErrorCode::kCompiler, "fake compiler {}", report.exit.describe()));
  }
  double score = module_.scoreOfAnswers ? module_.scoreOfAnswers(answers_) : module_.policyScore;
  if (auto st = writeFakeObject(command_.objectPath, score); !st.ok())
    return fail(st.error());
  finished_ = true;
  report.observations = requests_.observations();
  report.contexts = requests_.contexts();
  report.channelOpened = requests_.channelOpened();
  report.channels = {{requests_.channelOpened(), requests_.observations(), requests_.contexts()}};
  report.wallTime = Clock::now() - started_;
  report.compilerTime = waited_;
  return report;
}

} // namespace

Status writeFakeObject(const std::filesystem::path& path, double score) {
  std::ofstream out(path, std::ios::trunc);
  out << "mlgo-fake-object\nscore " << fmt::format("{}", score) << "\n";
  out.close();
  if (!out)
    return makeError(ErrorCode::kIo, "fake compiler cannot write {}", path.string());
  return Status::success();
}

std::unique_ptr<CompilerSession> makeFakeSession(std::shared_ptr<FakeDriver::State> state,
                                                 support::TempDir dir, CompileCommand command,
                                                 const SessionLimits& limits, FakeModule module) {
  return std::make_unique<FakeSession>(std::move(state), std::move(dir), std::move(command), limits,
                                       std::move(module));
}

} // namespace mlgo::env::testing
