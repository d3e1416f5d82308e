//===- server/connection.cc - one agent connection ------------------------===//
#include "mlgo/server/connection.h"

#include "mlgo/server/line_handler.h"

#include <algorithm>
#include <cstring>

namespace mlgo::server {

namespace asio = boost::asio;
using protocol::rpc::Code;

Connection::Connection(Strand strand, Dispatcher& dispatcher, FairExecutor& executor,
                       ConnectionLimits limits, uint64_t id, std::string peer, OnClosed onClosed)
    : strand_(std::move(strand)), dispatcher_(dispatcher), executor_(executor), limits_(limits),
      id_(id), peer_(std::move(peer)), onClosed_(std::move(onClosed)), idleTimer_(strand_),
      shutdownTimer_(strand_), patience_(strand_) {}

void Connection::start() {
  asio::dispatch(strand_, [self = shared_from_this()] {
    self->readMore();
    self->armIdleTimer();
  });
}

void Connection::shutdown() {
  asio::dispatch(strand_, [self = shared_from_this()] {
    self->lines_.clear();
    self->onPeerGone("server shutting down");
    // A client that does not read must not hold the server up.
    self->shutdownTimer_.expires_after(kShutdownGrace);
    self->shutdownTimer_.async_wait(
        [self](boost::system::error_code) { self->closeTransportOnce(); });
  });
}

void Connection::readMore() {
  if (reading_ || peerGone_ || busy_ || !lines_.empty() || congested())
    return;
  reading_ = true;
  asyncRead(
      asio::buffer(readBuffer_),
      [self = shared_from_this()](boost::system::error_code ec, size_t n) { self->onRead(ec, n); });
}

void Connection::onRead(boost::system::error_code ec, size_t bytes) {
  reading_ = false;
  if (peerGone_)
    return;
  std::string_view data(readBuffer_.data(), bytes);
  while (!data.empty()) {
    size_t newline = data.find('\n');
    std::string_view piece = data.substr(0, newline);
    if (!discarding_) {
      if (partial_.size() + piece.size() > limits_.maxLineBytes) {
        discarding_ = true;
        partial_.clear();
        send(protocol::rpc::encodeError(
            protocol::rpc::Id{}, Code::kLineTooLong,
            fmt::format("request line longer than {} bytes; skipped", limits_.maxLineBytes)));
      } else {
        partial_.append(piece);
      }
    }
    if (newline == std::string_view::npos)
      break;
    if (!discarding_ && !partial_.empty())
      lines_.push_back(std::move(partial_));
    partial_.clear();
    discarding_ = false;
    data.remove_prefix(newline + 1);
  }
  if (ec) {
    // EOF or error: a final line without newline still counts.
    if (!discarding_ && !partial_.empty())
      lines_.push_back(std::move(partial_));
    partial_.clear();
    peerGone_ = true;
  }
  processNextLine();
  readMore();
}

void Connection::processNextLine() {
  // A loop, not recursion: lines answered inline finish inside handleLine().
  // Paused while the client does not take its replies (writeNext resumes).
  while (!busy_ && !congested()) {
    if (lines_.empty() || closed_) {
      if (peerGone_)
        onPeerGone("peer closed the connection");
      return;
    }
    std::string line = std::move(lines_.front());
    lines_.pop_front();
    // Tolerate CRLF line ends and blank lines.
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    busy_ = true;
    handling_ = true;
    handleLine(std::move(line));
    handling_ = false;
  }
}

void Connection::handleLine(std::string text) {
  auto decoded =
      std::make_shared<protocol::rpc::Line>(protocol::rpc::decodeLine(text, limits_.maxBatch));
  auto replies = std::make_shared<std::vector<std::optional<std::string>>>(decoded->items.size());
  auto pending = std::make_shared<size_t>(decoded->items.size());
  const bool batch = decoded->batch;
  auto self = shared_from_this();
  auto done = [this, self, replies, pending, batch](size_t index, std::optional<std::string> r) {
    (*replies)[index] = std::move(r);
    if (--*pending == 0)
      finishLine(replies, batch);
  };
  for (size_t i = 0; i < decoded->items.size(); ++i) {
    auto& item = decoded->items[i];
    if (auto* bad = std::get_if<protocol::rpc::BadRequest>(&item)) {
      done(i, protocol::rpc::encodeError(bad->id, bad->code, bad->message));
      continue;
    }
    const auto& request = std::get<protocol::rpc::Request>(item);
    if (!batch && request.method == "step" && request.id) {
      startStep(request, [done](std::string reply) { done(0, std::move(reply)); });
      continue;
    }
    if (!Dispatcher::isBlocking(request.method)) {
      done(i, dispatcher_.handle(request, episodes_));
      continue;
    }
    executor_.post(id_, [this, self, decoded, i, done] {
      auto reply =
          dispatcher_.handle(std::get<protocol::rpc::Request>(decoded->items[i]), episodes_);
      asio::post(strand_,
                 [done, i, reply = std::move(reply)]() mutable { done(i, std::move(reply)); });
    });
  }
}

void Connection::finishLine(std::shared_ptr<std::vector<std::optional<std::string>>> replies,
                            bool batch) {
  if (auto reply = joinReplies(*replies, batch))
    send(std::move(*reply));
  busy_ = false;
  if (handling_)
    return; // processNextLine()'s loop goes on.
  processNextLine();
  readMore();
}

bool Connection::congested() const {
  return writes_.size() >= limits_.maxQueuedReplies || queuedBytes_ >= limits_.maxQueuedBytes;
}

void Connection::send(std::string line) {
  if (transportClosed_)
    return;
  line += '\n';
  queuedBytes_ += line.size();
  writes_.push_back(std::move(line));
  writeNext();
}

void Connection::writeNext() {
  if (writing_ || writes_.empty())
    return;
  writing_ = true;
  asyncWrite(writes_.front(),
             [self = shared_from_this()](boost::system::error_code ec) { self->onWritten(ec); });
}

void Connection::onWritten(boost::system::error_code ec) {
  const bool wasCongested = congested();
  writing_ = false;
  queuedBytes_ -= writes_.front().size();
  writes_.pop_front();
  if (ec) {
    writes_.clear();
    queuedBytes_ = 0;
    lines_.clear();
    onPeerGone("write failed");
    if (closed_)
      closeTransportOnce();
    return;
  }
  if (writes_.empty() && closed_)
    closeTransportOnce();
  writeNext();
  if (wasCongested && !congested() && !busy_) {
    // The client drained: handle the lines read meanwhile, then read on.
    processNextLine();
    readMore();
  }
}

void Connection::armIdleTimer() {
  auto period = std::clamp<std::chrono::milliseconds>(dispatcher_.options().agentTimeout / 4,
                                                      std::chrono::milliseconds(10),
                                                      std::chrono::milliseconds(1000));
  idleTimer_.expires_after(period);
  idleTimer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->peerGone_)
      return;
    // One expiry queued at a time: workers all busy (compiles hanging) must
    // not let a check per period pile up in the executor.
    if (self->episodes_.size() > 0 && !self->expiryQueued_.exchange(true))
      self->executor_.post(self->id_, [self] {
        self->expiryQueued_ = false;
        size_t expired = self->dispatcher_.expireIdle(self->episodes_);
        if (expired)
          std::fprintf(stderr, "mlgo-env: %s: %zu episode(s) timed out waiting for the agent\n",
                       self->peer_.c_str(), expired);
      });
    self->armIdleTimer();
  });
}

void Connection::closeTransportOnce() {
  if (transportClosed_)
    return;
  transportClosed_ = true;
  closeTransport();
  closeStepDone();
}

void Connection::closeStepDone() {
  // Two steps: transport closed (after the last write), episodes closed.
  if (--closeStepsLeft_ == 0 && onClosed_)
    onClosed_(id_);
}

void Connection::onPeerGone(const char* why) {
  peerGone_ = true;
  if (closed_ || busy_)
    return; // A line in flight comes back here through processNextLine().
  closed_ = true;
  lines_.clear();
  idleTimer_.cancel();
  patience_.cancel();
  dropWatch();
  if (!writing_ && writes_.empty())
    closeTransportOnce(); // Else once the last response is written.
  size_t open = episodes_.size();
  if (open)
    std::fprintf(stderr, "mlgo-env: %s: %s; closing its %zu episode(s)\n", peer_.c_str(), why,
                 open);
  // Closing episodes kills compilers and may block: off the I/O thread.
  executor_.post(id_, [self = shared_from_this()] {
    self->dispatcher_.closeAll(self->episodes_);
    asio::post(self->strand_, [self] { self->closeStepDone(); });
  });
}

} // namespace mlgo::server
