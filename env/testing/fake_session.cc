//===- env/testing/fake_session.cc - one replayed compile -----------------===//
#include "fake_session.h"

#include "mlgo/protocol/stream_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <unordered_set>

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
        started_(Clock::now()) {
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

  const protocol::LogHeader* header() const override {
    return reader_.hasHeader() ? &reader_.header() : nullptr;
  }
  uint64_t observations() const override { return observations_; }
  pid_t pid() const override { return -1; }
  const CompileCommand& command() const override { return command_; }

private:
  /// The fake compiler runs until it would wait for an answer (or ends).
  Status compilerRuns();
  /// Writes the recording up to `end` (no further than it goes).
  void write(size_t end) {
    end = std::min(end, module_.stream.size());
    if (end > written_)
      reader_.feed(std::string_view(module_.stream).substr(written_, end - written_));
    written_ = std::max(written_, end);
  }
  /// The compiler closes its end of the channel.
  void closeChannel() {
    eof_ = true;
    if (written_ > 0)
      reader_.finish();
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
  protocol::StreamReader reader_;
  size_t written_ = 0;
  bool eof_ = false;
  bool hanging_ = false;
  bool died_ = false;
  bool faulted_ = false;
  bool pending_ = false;
  bool ended_ = false;
  bool finished_ = false;
  uint64_t observations_ = 0;
  std::vector<std::string> contexts_;
  std::unordered_set<std::string> contextSet_;
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
                     limits_.compileTimeout.count(), observations_);
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
    reader_.feed(std::string_view("this is not a record\n"));
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
  if (pending_)
    return makeError(ErrorCode::kInvalidArgument, "observation {} has not been answered yet",
                     observations_ - 1);
  if (ended_)
    return SessionEvent::kEnd;
  protocol::LogEvent event;
  for (;;) {
    auto status = reader_.next(event);
    if (!status.ok())
      return fail(status.error().withContext("malformed stream from fake compiler"));
    if (*status == protocol::ReadStatus::kEnd) {
      ended_ = true;
      return SessionEvent::kEnd;
    }
    if (*status == protocol::ReadStatus::kNeedMore) {
      if (eof_) { // The channel was never written to.
        ended_ = true;
        return SessionEvent::kEnd;
      }
      if (auto st = compilerRuns(); !st.ok())
        return fail(st.error());
      continue;
    }
    if (event.kind == protocol::EventKind::kContext) {
      if (contextSet_.emplace(event.context).second)
        contexts_.emplace_back(event.context);
      continue;
    }
    if (event.kind == protocol::EventKind::kOutcome)
      return fail(makeError(ErrorCode::kCompiler, "fake compiler sent an outcome record"));
    if (event.kind != protocol::EventKind::kObservation)
      continue;
    if (++observations_ > limits_.maxObservations)
      return fail(makeError(ErrorCode::kCompiler,
                            "fake compiler made more than {} decision requests (the "
                            "observation cap); killed",
                            limits_.maxObservations));
    observation.context = reader_.context();
    observation.id = event.id;
    observation.data = event.data;
    observation.tensors = event.tensors;
    pending_ = true;
    return SessionEvent::kObservation;
  }
}

Status FakeSession::answer(std::span<const std::byte> advice) {
  if (failed_)
    return *failed_;
  if (!pending_)
    return makeError(ErrorCode::kInvalidArgument, "there is no decision request to answer");
  const auto& spec = reader_.header().advice;
  if (!spec)
    return fail(makeError(ErrorCode::kCompiler, "the recorded header declares no advice tensor"));
  if (advice.size() != spec->byteSize())
    return makeError(ErrorCode::kInvalidArgument, "an answer must be {} bytes ({}), not {}",
                     spec->byteSize(), spec->toJson(), advice.size());
  answers_.emplace_back(advice.begin(), advice.end());
  pending_ = false;
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
                          report.exit.describe(), observations_));
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
  report.observations = observations_;
  report.contexts = contexts_;
  report.channelOpened = reader_.hasHeader();
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
