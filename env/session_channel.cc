//===- env/session_channel.cc - one fifo pair of a compiler session ---------===//
#include "session_channel.h"

#include "mlgo/support/subprocess.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <set>

namespace mlgo::env::detail {
namespace {

constexpr size_t kReadChunk = 64 << 10;

} // namespace

SessionChannel::SessionChannel(std::filesystem::path base, std::string program,
                               uint64_t maxObservations, uint64_t* sharedCount)
    : base_(std::move(base)), fifo_(base_.string()),
      requests_(std::move(program), maxObservations, sharedCount) {}

Status SessionChannel::open(const std::filesystem::path& recordTo) {
  MLGO_TRY(support::FifoChannel::makeFifos(base_.string()));
  MLGO_TRY(fifo_.open());
  if (!recordTo.empty()) {
    record_ = std::fopen(recordTo.c_str(), "wbe");
    if (record_ == nullptr)
      return makeError(ErrorCode::kIo, "cannot write {}: {}", recordTo.string(),
                       std::strerror(errno));
  }
  return Status::success();
}

Status SessionChannel::read(bool exited) {
  for (;;) {
    auto buffer = requests_.reader().prepare(kReadChunk);
    ssize_t n = ::read(fifo_.outFd(), buffer.data(), buffer.size());
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
    if (n == 0 || (exited && (errno == EAGAIN || errno == EWOULDBLOCK))) {
      streamEnded_ = true;
      if (bytesReceived_ > 0)
        requests_.reader().finish();
      return Status::success();
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return Status::success();
    return makeError(ErrorCode::kIo, "cannot read {}.out: {}", base_.string(),
                     std::strerror(errno));
  }
}

Result<RequestStream::Next> SessionChannel::advance(Observation& observation) {
  auto next = requests_.advance(observation);
  if (next.ok() && (*next == RequestStream::Next::kEnd ||
                    (*next == RequestStream::Next::kNeedMore && streamEnded_)))
    done_ = true;
  return next;
}

void SessionChannel::close() {
  fifo_.close();
  if (record_ != nullptr) {
    std::fclose(record_);
    record_ = nullptr;
  }
}

ChannelReport SessionChannel::report() const {
  return {requests_.channelOpened(), requests_.observations(), requests_.contexts()};
}

Status SessionChannels::open(const CompileCommand& command, const SessionLimits& limits,
                             const std::string& program) {
  program_ = program;
  if (command.channelBase.empty()) {
    if (!command.extraChannels.empty())
      return makeError(ErrorCode::kInvalidArgument,
                       "extra channels need a channel base (channel 0) in the compile command");
    return Status::success();
  }
  if (command.extraChannels.size() > kMaxExtraChannels)
    return makeError(ErrorCode::kInvalidArgument,
                     "a compile command names {} extra channels; a session serves at most {}",
                     command.extraChannels.size(), kMaxExtraChannels);
  std::vector<std::filesystem::path> bases = {command.channelBase};
  bases.insert(bases.end(), command.extraChannels.begin(), command.extraChannels.end());
  std::set<std::filesystem::path> seen;
  for (const auto& base : bases)
    if (!seen.insert(base).second)
      return makeError(ErrorCode::kInvalidArgument,
                       "the compile command names channel base {} twice", base.string());
  for (size_t i = 0; i < bases.size(); ++i) {
    channels_.push_back(std::make_unique<SessionChannel>(bases[i], program_, limits.maxObservations,
                                                         &observations_));
    std::filesystem::path record = limits.recordStreamTo;
    if (i > 0 && !record.empty())
      record += "." + std::to_string(i);
    MLGO_TRY(channels_.back()->open(record));
  }
  return Status::success();
}

std::optional<size_t> SessionChannels::pending() const {
  for (size_t i = 0; i < channels_.size(); ++i)
    if (channels_[i]->requests().pending())
      return i;
  return std::nullopt;
}

Error SessionChannels::twoPending(size_t pending, size_t other) const {
  return makeError(ErrorCode::kCompiler,
                   "{} asked on channel {} ({}) while its request on channel {} ({}) was "
                   "unanswered (a compiler asks on one channel at a time); killed",
                   program_, other, channels_[other]->base().string(), pending,
                   channels_[pending]->base().string());
}

Result<std::optional<size_t>> SessionChannels::advanceAll(Observation& observation) {
  std::optional<size_t> found;
  Observation other;
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (channels_[i]->done())
      continue;
    auto next = channels_[i]->advance(found ? other : observation);
    if (!next.ok())
      return next.error();
    if (*next != RequestStream::Next::kObservation)
      continue;
    if (found)
      return twoPending(*found, i);
    found = i;
    observation.channel = i;
  }
  return found;
}

Status SessionChannels::checkOthersQuiet(size_t pending) {
  // One poll over every channel still open; the pending one's compiler waits
  // for its answer, so only another channel can have something to read.
  MLGO_TRY(readNow());
  Observation other;
  for (size_t i = 0; i < channels_.size(); ++i) {
    SessionChannel& channel = *channels_[i];
    if (i == pending || channel.done())
      continue;
    auto next = channel.advance(other);
    if (!next.ok())
      return next.error();
    if (*next == RequestStream::Next::kObservation)
      return twoPending(pending, i);
  }
  return Status::success();
}

void SessionChannels::pollFds(std::span<int> fds) const {
  for (size_t i = 0; i < channels_.size(); ++i)
    fds[i] = channels_[i]->done() || channels_[i]->streamEnded() ? -1 : channels_[i]->outFd();
}

Status SessionChannels::readReady(unsigned ready, bool exited) {
  for (size_t i = 0; i < channels_.size(); ++i) {
    SessionChannel& channel = *channels_[i];
    if (((ready >> i) & 1u) != 0 && !channel.done() && !channel.streamEnded())
      MLGO_TRY(channel.read(exited));
  }
  return Status::success();
}

Status SessionChannels::readNow() {
  std::array<int, kMaxExtraChannels + 1> fds;
  pollFds(fds);
  auto ready =
      support::waitReadable(std::span(fds.data(), channels_.size()), support::Clock::now());
  if (!ready.ok())
    return ready.error();
  return readReady(*ready, /*exited=*/false);
}

bool SessionChannels::allDone() const {
  return std::all_of(channels_.begin(), channels_.end(), [](const auto& c) { return c->done(); });
}

bool SessionChannels::anyMalformed() const {
  return std::any_of(channels_.begin(), channels_.end(),
                     [](const auto& c) { return c->requests().malformed(); });
}

uint64_t SessionChannels::bytesReceived() const {
  uint64_t sum = 0;
  for (const auto& channel : channels_)
    sum += channel->bytesReceived();
  return sum;
}

uint64_t SessionChannels::progress() const {
  uint64_t sum = bytesReceived();
  for (const auto& channel : channels_)
    sum += channel->streamEnded() ? 1 : 0;
  return sum;
}

void SessionChannels::fillReport(CompileReport& report) const {
  report.observations = observations_;
  std::set<std::string_view> named;
  for (const auto& channel : channels_) {
    report.channels.push_back(channel->report());
    report.channelOpened = report.channelOpened || channel->requests().channelOpened();
    for (const std::string& context : channel->requests().contexts())
      if (named.insert(context).second)
        report.contexts.push_back(context);
  }
}

void SessionChannels::close() {
  for (auto& channel : channels_)
    channel->close();
}

} // namespace mlgo::env::detail
