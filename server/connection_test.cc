//===- server/connection_test.cc - framing and backpressure, no socket ----===//
//
// A Connection over an in-memory transport the test drives: it hands the
// connection input in chosen chunks, and takes (or holds back) its writes.
// The environment runs on the fake compiler driver; no clang, no socket.
//
#include "mlgo/server/connection.h"

#include "server_test_util.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

namespace mlgo::server {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::errorCode;
using testing::parse;
using testing::request;
using Code = protocol::rpc::Code;

/// What the client side of a MemoryConnection sees; guarded by `mutex`.
struct Wire {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> input; ///< Chunks not yet read by the connection.
  bool inputClosed = false;
  std::string output; ///< Everything written and taken by the client.
  bool holdWrites = false;
  size_t readsRequested = 0;
  bool closed = false;
};

class MemoryConnection final : public Connection {
public:
  MemoryConnection(std::shared_ptr<Wire> wire, Strand strand, Dispatcher& dispatcher,
                   FairExecutor& executor, ConnectionLimits limits, OnClosed onClosed)
      : Connection(std::move(strand), dispatcher, executor, limits, 1, "memory",
                   std::move(onClosed)),
        wire_(std::move(wire)) {}

  /// Delivers pending input to a waiting read, and held writes once released.
  void pump() {
    asio::post(strand_, [this, self = shared_from_this()] {
      std::unique_lock lock(wire_->mutex);
      if (pendingRead_ && (!wire_->input.empty() || wire_->inputClosed)) {
        auto handler = std::move(pendingRead_);
        pendingRead_ = nullptr;
        size_t n = 0;
        boost::system::error_code ec;
        if (wire_->input.empty()) {
          ec = asio::error::eof;
        } else {
          std::string& chunk = wire_->input.front();
          n = std::min(chunk.size(), target_.size());
          std::memcpy(target_.data(), chunk.data(), n);
          chunk.erase(0, n);
          if (chunk.empty())
            wire_->input.pop_front();
        }
        lock.unlock();
        handler(ec, n);
        lock.lock();
      }
      if (pendingWrite_ && !wire_->holdWrites) {
        auto handler = std::move(pendingWrite_);
        pendingWrite_ = nullptr;
        wire_->output += writing_;
        wire_->changed.notify_all();
        lock.unlock();
        handler({});
      }
    });
  }

protected:
  void asyncRead(asio::mutable_buffer buffer, ReadHandler handler) override {
    target_ = buffer;
    pendingRead_ = std::move(handler);
    {
      std::lock_guard lock(wire_->mutex);
      ++wire_->readsRequested;
    }
    pump();
  }
  void asyncWrite(const std::string& data, WriteHandler handler) override {
    writing_ = data;
    pendingWrite_ = std::move(handler);
    pump();
  }
  void closeTransport() override {
    {
      std::lock_guard lock(wire_->mutex);
      wire_->closed = true;
      wire_->changed.notify_all();
    }
    // As a closed socket does: pending operations end with operation_aborted
    // (their handlers hold the connection, which holds them).
    auto read = std::move(pendingRead_);
    auto write = std::move(pendingWrite_);
    pendingRead_ = nullptr;
    pendingWrite_ = nullptr;
    asio::post(strand_, [read = std::move(read), write = std::move(write)] {
      if (read)
        read(asio::error::operation_aborted, 0);
      if (write)
        write(asio::error::operation_aborted);
    });
  }

private:
  std::shared_ptr<Wire> wire_;
  asio::mutable_buffer target_;
  ReadHandler pendingRead_;
  std::string writing_;
  WriteHandler pendingWrite_;
};

class ConnectionTest : public ::testing::Test {
protected:
  virtual DispatcherOptions dispatcherOptions() const { return {}; }
  void SetUp() override {
    fake_ = testing::makeFake();
    ASSERT_TRUE(fake_);
    dispatcher_ = std::make_unique<Dispatcher>(fake_->environment(), dispatcherOptions());
  }
  void TearDown() override {
    if (!connection_)
      return;
    connection_->shutdown();
    bool closed = waitFor([&] { return closedCalls_ > 0; }, 5s);
    EXPECT_TRUE(closed);
    connection_.reset();
    work_.reset();
    if (!closed)
      io_.stop();
    thread_.join();
  }
  void open(ConnectionLimits limits = {}) {
    connection_ = std::make_shared<MemoryConnection>(wire_, asio::make_strand(io_), *dispatcher_,
                                                     executor_, limits, [this](uint64_t) {
                                                       std::lock_guard lock(wire_->mutex);
                                                       ++closedCalls_;
                                                       wire_->changed.notify_all();
                                                     });
    connection_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void send(std::string chunk) {
    {
      std::lock_guard lock(wire_->mutex);
      wire_->input.push_back(std::move(chunk));
    }
    connection_->pump();
  }
  void closeInput() {
    {
      std::lock_guard lock(wire_->mutex);
      wire_->inputClosed = true;
    }
    connection_->pump();
  }
  template <typename Pred> bool waitFor(Pred pred, std::chrono::milliseconds timeout) {
    std::unique_lock lock(wire_->mutex);
    return wire_->changed.wait_for(lock, timeout, pred);
  }
  /// Waits for `n` reply lines and returns them.
  std::vector<std::string> replies(size_t n) {
    waitFor([&] { return std::count(wire_->output.begin(), wire_->output.end(), '\n') >= long(n); },
            10s);
    std::lock_guard lock(wire_->mutex);
    std::vector<std::string> lines;
    std::istringstream in(wire_->output);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

  std::unique_ptr<testing::FakeEnvironment> fake_;
  std::unique_ptr<Dispatcher> dispatcher_;
  FairExecutor executor_{2};
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  std::thread thread_;
  std::shared_ptr<Wire> wire_ = std::make_shared<Wire>();
  std::shared_ptr<MemoryConnection> connection_;
  std::atomic<int> closedCalls_{0};
};

int64_t idOf(const std::string& line) {
  auto value = parse(line);
  const auto* object = value.getAsObject();
  return object ? object->getInteger("id").value_or(-1) : -1;
}

TEST_F(ConnectionTest, LinesSplitAnywhereAreAnsweredInOrder) {
  open();
  std::string text =
      request(1, "describe") + "\r\n\n   \n" + request(2, "fly") + "\n" + request(3, "describe");
  // One byte per read for the first line, then the rest at once.
  for (size_t i = 0; i < 20; ++i)
    send(text.substr(i, 1));
  send(text.substr(20));
  closeInput(); // The last line has no newline: it still counts.
  auto lines = replies(3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(idOf(lines[0]), 1);
  EXPECT_EQ(idOf(lines[1]), 2);
  EXPECT_EQ(errorCode(parse(lines[1])), static_cast<int>(Code::kMethodNotFound));
  EXPECT_EQ(idOf(lines[2]), 3);
}

TEST_F(ConnectionTest, AnOverLongLineIsRefusedAndTheConnectionGoesOn) {
  ConnectionLimits limits;
  limits.maxLineBytes = 1000;
  open(limits);
  send(std::string(5000, 'x'));
  send(std::string(5000, 'y') + "\n" + request(2, "describe") + "\n");
  auto lines = replies(2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(errorCode(parse(lines[0])), static_cast<int>(Code::kLineTooLong));
  EXPECT_EQ(idOf(lines[1]), 2);
}

TEST_F(ConnectionTest, DeepNestingIsAnErrorNotACrash) {
  open();
  send(std::string(100000, '[') + "\n" + request(2, "describe") + "\n");
  auto lines = replies(2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(errorCode(parse(lines[0])), 0);
  EXPECT_EQ(idOf(lines[1]), 2);
}

TEST_F(ConnectionTest, ABatchOfBlockingItemsIsAnsweredInItemOrder) {
  open();
  std::string batch = "[" + request(1, "reset", R"({"module":"alpha"})") + "," +
                      request(2, "describe") + "," + request(3, "reset", R"({"module":"beta"})") +
                      "," + request(4, "close", R"({"episode":12345})") + "]\n";
  send(batch);
  auto lines = replies(1);
  ASSERT_EQ(lines.size(), 1u);
  auto value = parse(lines[0]);
  const auto* items = value.getAsArray();
  ASSERT_TRUE(items);
  ASSERT_EQ(items->size(), 4u);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ((*items)[i].getAsObject()->getInteger("id"), i + 1);
  EXPECT_EQ(errorCode((*items)[3]), static_cast<int>(Code::kUnknownEpisode));
  EXPECT_EQ(fake_->environment().openEpisodes(), 2u);
}

TEST_F(ConnectionTest, AClientThatDoesNotReadStopsBeingRead) {
  {
    std::lock_guard lock(wire_->mutex);
    wire_->holdWrites = true;
  }
  ConnectionLimits limits;
  limits.maxQueuedReplies = 4;
  open(limits);
  std::string chunk;
  for (int i = 0; i < 10; ++i)
    chunk += request(i, "describe") + "\n";
  for (int c = 0; c < 20; ++c)
    send(chunk);
  // It answers until 4 replies wait for the client, then reads no more.
  std::this_thread::sleep_for(300ms);
  size_t readsBefore, chunksLeft;
  {
    std::lock_guard lock(wire_->mutex);
    readsBefore = wire_->readsRequested;
    chunksLeft = wire_->input.size();
    EXPECT_TRUE(wire_->output.empty());
  }
  EXPECT_GE(chunksLeft, 18u);
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard lock(wire_->mutex);
    EXPECT_EQ(wire_->readsRequested, readsBefore);
    wire_->holdWrites = false;
  }
  // The client drains: every line gets its reply, in order.
  connection_->pump();
  auto lines = replies(200);
  ASSERT_EQ(lines.size(), 200u);
  EXPECT_EQ(idOf(lines[0]), 0);
  EXPECT_EQ(idOf(lines[199]), 9);
}

TEST_F(ConnectionTest, APeerThatLeavesHasItsEpisodesClosed) {
  open();
  send(request(1, "reset", "{}") + "\n" + request(2, "reset", "{}") + "\n");
  replies(2);
  EXPECT_EQ(fake_->environment().openEpisodes(), 2u);
  closeInput();
  EXPECT_TRUE(waitFor([&] { return closedCalls_ > 0; }, 5s));
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
  EXPECT_EQ(fake_->driver().liveSessions(), 0u);
}

class ConnectionAgentTimeoutTest : public ConnectionTest {
protected:
  DispatcherOptions dispatcherOptions() const override {
    DispatcherOptions options;
    options.agentTimeout = 50ms;
    return options;
  }
};

TEST_F(ConnectionAgentTimeoutTest, ASilentAgentsEpisodeIsClosedByTheIdleTimer) {
  open();
  send(request(1, "reset", R"({"module":"alpha"})") + "\n");
  auto reset = parse(replies(1).at(0));
  ASSERT_TRUE(testing::result(reset));
  int64_t episode = testing::result(reset)->getInteger("episode").value_or(-1);
  // Nobody steps: the connection's timer closes the episode and its compile.
  for (int i = 0; i < 200 && fake_->environment().openEpisodes() > 0; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
  EXPECT_EQ(fake_->driver().liveSessions(), 0u);
  send(request(2, "step", R"({"episode":)" + std::to_string(episode) + R"(,"action":0})") + "\n");
  auto lines = replies(2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(errorCode(parse(lines[1])), static_cast<int>(Code::kEpisodeFailed));
  EXPECT_THAT(lines[1], ::testing::HasSubstr("did not answer"));
}

} // namespace
} // namespace mlgo::server
