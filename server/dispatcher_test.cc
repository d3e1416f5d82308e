//===- server/dispatcher_test.cc - request lines to replies, no clang -----===//
//
// The line handler (decode + dispatch) over an Environment on the fake
// compiler driver: every method, every error code, batches, notifications,
// ids, agent timeouts.
//
#include "mlgo/server/line_handler.h"

#include "server_test_util.h"

#include <gmock/gmock.h>

#include <thread>

namespace mlgo::server {
namespace {

using namespace std::chrono_literals;
using testing::errorCode;
using ::testing::HasSubstr;
using testing::makeFake;
using testing::parse;
using testing::request;
using testing::result;
using Code = protocol::rpc::Code;

constexpr int kCode(Code code) {
  return static_cast<int>(code);
}

class DispatcherTest : public ::testing::Test {
protected:
  void SetUp() override { init({}, {}); }
  void init(testing::FakeEnvironmentSetup setup, DispatcherOptions options) {
    dispatcher_.reset();
    fake_ = makeFake(std::move(setup));
    ASSERT_TRUE(fake_);
    dispatcher_ = std::make_unique<Dispatcher>(fake_->environment(), options);
  }
  /// The reply to `line` on connection `episodes` (default: this test's).
  llvm::json::Value call(const std::string& line, ConnectionEpisodes* episodes = nullptr) {
    auto reply = handleLine(line, *dispatcher_, episodes ? *episodes : episodes_, 64);
    EXPECT_TRUE(reply.has_value()) << line;
    return reply ? parse(*reply) : llvm::json::Value(nullptr);
  }
  /// Resets and returns the new episode's id.
  int64_t reset(std::string_view params = R"({"module":"alpha"})") {
    auto reply = call(request(1, "reset", params));
    const auto* r = result(reply);
    EXPECT_TRUE(r != nullptr);
    return r ? r->getInteger("episode").value_or(-1) : -1;
  }
  std::string step(int64_t episode, std::string_view action, int id = 2) {
    return request(id, "step",
                   R"({"episode":)" + std::to_string(episode) + R"(,"action":)" +
                       std::string(action) + "}");
  }

  std::unique_ptr<testing::FakeEnvironment> fake_;
  std::unique_ptr<Dispatcher> dispatcher_;
  ConnectionEpisodes episodes_;
};

TEST_F(DispatcherTest, DescribeNamesTheProblemAndTheFakeClang) {
  auto reply = call(request(7, "describe"));
  ASSERT_TRUE(result(reply));
  EXPECT_EQ(result(reply)->getString("problem"), "inlining");
  EXPECT_EQ(reply.getAsObject()->getInteger("id"), 7);
  EXPECT_THAT(result(reply)->getObject("clang")->getString("version")->str(),
              HasSubstr("fake clang"));
}

TEST_F(DispatcherTest, ResetStepToTheEndThenTheEpisodeIsGone) {
  int64_t episode = reset();
  ASSERT_GT(episode, 0);
  EXPECT_EQ(episodes_.size(), 1u);
  llvm::json::Value last = nullptr;
  for (int i = 0; i < 11; ++i) {
    last = call(step(episode, "0"));
    ASSERT_TRUE(result(last)) << i;
  }
  EXPECT_EQ(result(last)->getBoolean("terminated"), true);
  EXPECT_TRUE(result(last)->getObject("info")->getNumber("policy_score").has_value());
  EXPECT_EQ(episodes_.size(), 0u);
  EXPECT_EQ(errorCode(call(step(episode, "0"))), kCode(Code::kUnknownEpisode));
}

TEST_F(DispatcherTest, MaxStepsTruncates) {
  int64_t episode = reset(R"({"module":"beta","options":{"max_steps":2}})");
  call(step(episode, "1"));
  auto last = call(step(episode, "1"));
  ASSERT_TRUE(result(last));
  EXPECT_EQ(result(last)->getBoolean("truncated"), true);
  EXPECT_EQ(result(last)->getObject("info")->getInteger("fallback_steps"), 9);
}

TEST_F(DispatcherTest, InvalidActionsLeaveTheEpisodeWhereItWas) {
  int64_t episode = reset();
  for (const char* bad : {"7", "[0,1]", "\"yes\"", "1.5"})
    EXPECT_EQ(errorCode(call(step(episode, bad))), kCode(Code::kInvalidAction)) << bad;
  EXPECT_EQ(fake_->driver().answersReceived(), 0u);
  EXPECT_TRUE(result(call(step(episode, "1"))));
}

TEST_F(DispatcherTest, CloseEndsAnEpisodeAndKillsItsCompile) {
  int64_t episode = reset();
  auto closed = call(request(3, "close", R"({"episode":)" + std::to_string(episode) + "}"));
  ASSERT_TRUE(result(closed));
  EXPECT_EQ(result(closed)->getBoolean("closed"), true);
  EXPECT_EQ(fake_->driver().liveSessions(), 0u);
  EXPECT_EQ(errorCode(call(request(3, "close", R"({"episode":)" + std::to_string(episode) + "}"))),
            kCode(Code::kUnknownEpisode));
}

TEST_F(DispatcherTest, EpisodesBelongToTheirConnection) {
  int64_t episode = reset();
  ConnectionEpisodes other;
  EXPECT_EQ(errorCode(call(step(episode, "0"), &other)), kCode(Code::kUnknownEpisode));
  EXPECT_EQ(errorCode(call(request(4, "close", R"({"episode":)" + std::to_string(episode) + "}"),
                           &other)),
            kCode(Code::kUnknownEpisode));
  EXPECT_TRUE(result(call(step(episode, "0"))));
}

TEST_F(DispatcherTest, EveryRequestErrorCode) {
  EXPECT_EQ(errorCode(call("{not json")), kCode(Code::kParseError));
  EXPECT_EQ(errorCode(call(R"({"jsonrpc":"2.0","id":1})")), kCode(Code::kInvalidRequest));
  EXPECT_EQ(errorCode(call(request(1, "fly"))), kCode(Code::kMethodNotFound));
  EXPECT_EQ(errorCode(call(request(1, "reset", R"({"module":"nope"})"))),
            kCode(Code::kInvalidParams));
  EXPECT_EQ(errorCode(call(request(1, "reset", R"({"seed":-1})"))), kCode(Code::kInvalidParams));
  EXPECT_EQ(errorCode(call(request(1, "step", R"({"episode":1})"))), kCode(Code::kInvalidParams));
  EXPECT_EQ(errorCode(call(step(999, "0"))), kCode(Code::kUnknownEpisode));
}

TEST_F(DispatcherTest, DeepNestingIsAnErrorNotACrash) {
  auto reply = call(std::string(100000, '['));
  EXPECT_NE(errorCode(reply), 0);
  EXPECT_TRUE(result(call(request(1, "describe"))));
}

TEST_F(DispatcherTest, IdsComeBackByteForByte) {
  for (std::string id : {"1e999", "123456789012345678901234567890", "1.5e-400", "-0", "\"x\""}) {
    auto reply = handleLine(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"describe"})",
                            *dispatcher_, episodes_, 64);
    ASSERT_TRUE(reply.has_value());
    EXPECT_THAT(*reply, HasSubstr("\"id\":" + id + ",")) << id;
  }
}

TEST_F(DispatcherTest, ResetOrStepAsNotificationIsRefusedWithNoSideEffect) {
  auto reply =
      handleLine(R"({"jsonrpc":"2.0","method":"reset","params":{}})", *dispatcher_, episodes_, 64);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(errorCode(parse(*reply)), kCode(Code::kInvalidRequest));
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
  EXPECT_EQ(fake_->driver().sessionsStarted(), 0u);
  // A describe notification has no reply at all.
  EXPECT_FALSE(handleLine(R"({"jsonrpc":"2.0","method":"describe"})", *dispatcher_, episodes_, 64)
                   .has_value());
}

TEST_F(DispatcherTest, BatchesAreAnsweredInItemOrder) {
  int64_t episode = reset();
  std::string batch = "[" + request(10, "describe") + "," + step(episode, "0", 11) + "," +
                      request(12, "reset", "{}") + "," +
                      R"({"jsonrpc":"2.0","method":"describe"})" + "," + request(13, "fly") + "]";
  auto reply = call(batch);
  const auto* items = reply.getAsArray();
  ASSERT_TRUE(items);
  ASSERT_EQ(items->size(), 4u); // The notification has no response.
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ((*items)[i].getAsObject()->getInteger("id"), 10 + static_cast<int64_t>(i));
  EXPECT_EQ(errorCode((*items)[3]), kCode(Code::kMethodNotFound));
  EXPECT_EQ(errorCode(call("[]")), kCode(Code::kInvalidRequest));
}

/// A reply line split into its JSON and the bytes after its first newline.
std::pair<std::string, std::string> splitFrame(const std::string& reply) {
  size_t newline = reply.find('\n');
  if (newline == std::string::npos)
    return {reply, ""};
  return {reply.substr(0, newline), reply.substr(newline + 1)};
}

/// The observation of a JSON-encoded reply as the raw bytes a frame holds.
std::string rawOfJsonObservation(const llvm::json::Object& observation,
                                 const env::EnvironmentDescription& d) {
  std::string raw;
  for (const auto& spec : d.observationSpecs) {
    const auto* values = observation.getArray(spec.name());
    EXPECT_TRUE(values) << spec.name();
    for (const auto& v : *values) {
      // The fake inlining problem's features are int64 and float.
      if (spec.type() == protocol::ElementType::kInt64) {
        int64_t x = *v.getAsInteger();
        raw.append(reinterpret_cast<const char*>(&x), sizeof x);
      } else {
        float x = static_cast<float>(*v.getAsNumber());
        raw.append(reinterpret_cast<const char*>(&x), sizeof x);
      }
    }
  }
  return raw;
}

TEST_F(DispatcherTest, BinaryObservationsFollowTheirReplyLine) {
  const auto& d = fake_->environment().describe();
  auto lineOf = [&](const std::string& text) {
    auto reply = handleLine(text, *dispatcher_, episodes_, 64);
    EXPECT_TRUE(reply);
    return reply.value_or("");
  };
  // Two episodes of the same module, one JSON, one binary: same decisions.
  std::string jsonReset = lineOf(request(1, "reset", R"({"module":"alpha"})"));
  auto [binaryJson, frame] =
      splitFrame(lineOf(request(2, "reset", R"({"module":"alpha","encoding":"binary"})")));
  auto asJson = parse(jsonReset), asBinary = parse(binaryJson);
  ASSERT_TRUE(result(asJson) && result(asBinary));
  std::string expected = rawOfJsonObservation(*result(asJson)->getObject("observation"), d);
  EXPECT_EQ(result(asBinary)->getObject("observation")->getInteger("$frame"),
            static_cast<int64_t>(expected.size()));
  EXPECT_EQ(frame, expected);
  int64_t plain = *result(asJson)->getInteger("episode");
  int64_t binary = *result(asBinary)->getInteger("episode");
  // A step (the fast reply path) and a batch of two steps.
  auto stepJson = parse(lineOf(step(plain, "0", 3)));
  auto [stepLine, stepFrame] = splitFrame(lineOf(step(binary, "0", 4)));
  EXPECT_EQ(stepFrame, rawOfJsonObservation(*result(stepJson)->getObject("observation"), d));
  // A batch (here run item after item): the frames follow in item order.
  auto batchJson = parse(lineOf("[" + step(plain, "1", 5) + "," + request(6, "describe") + "," +
                                step(plain, "1", 7) + "]"));
  auto [batchLine, batchFrames] = splitFrame(
      lineOf("[" + step(binary, "1", 8) + "," + request(9, "describe") + "," +
             step(binary, "1", 10) + "]"));
  auto batchReply = parse(batchLine);
  const auto* items = batchReply.getAsArray();
  ASSERT_TRUE(items && items->size() == 3u);
  EXPECT_EQ((*items)[1].getAsObject()->getInteger("id"), 9);
  const auto& plainItems = *batchJson.getAsArray();
  EXPECT_EQ(batchFrames,
            rawOfJsonObservation(*result(plainItems[0])->getObject("observation"), d) +
                rawOfJsonObservation(*result(plainItems[2])->getObject("observation"), d));
  // The episode's last step has no observation and no frame.
  std::string last;
  for (int i = 0; i < 20 && last.empty(); ++i) {
    auto reply = lineOf(step(binary, "0", 20 + i));
    if (result(parse(splitFrame(reply).first))->getBoolean("terminated") == true)
      last = reply;
  }
  ASSERT_FALSE(last.empty());
  EXPECT_EQ(last.find('\n'), std::string::npos);
}

TEST_F(DispatcherTest, AFailedCompileIsReportedAndForgotten) {
  testing::FakeEnvironmentSetup setup;
  env::testing::FakeModule broken;
  broken.stream = *env::testing::loadRecordedStream("inlining.stream");
  broken.fault = env::testing::FakeFault::kTruncate;
  broken.faultAfter = 1;
  setup.driver.modules["alpha"] = broken;
  init(std::move(setup), {});
  int64_t episode = reset();
  auto failed = call(step(episode, "0"));
  EXPECT_EQ(errorCode(failed), kCode(Code::kEpisodeFailed));
  EXPECT_EQ(episodes_.size(), 0u);
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
  // Later calls say why it failed.
  auto again = call(step(episode, "0"));
  EXPECT_EQ(errorCode(again), kCode(Code::kEpisodeFailed));
}

TEST_F(DispatcherTest, SilentAgentsEpisodesExpire) {
  DispatcherOptions options;
  options.agentTimeout = 20ms;
  init({}, options);
  int64_t episode = reset();
  EXPECT_EQ(dispatcher_->expireIdle(episodes_), 0u);
  std::this_thread::sleep_for(40ms);
  EXPECT_EQ(dispatcher_->expireIdle(episodes_), 1u);
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
  EXPECT_EQ(fake_->driver().liveSessions(), 0u);
  auto late = call(step(episode, "0"));
  EXPECT_EQ(errorCode(late), kCode(Code::kEpisodeFailed));
  EXPECT_THAT(late.getAsObject()->getObject("error")->getString("message")->str(),
              HasSubstr("did not answer"));
}

TEST_F(DispatcherTest, EpisodesPerConnectionAreBounded) {
  DispatcherOptions options;
  options.maxEpisodesPerConnection = 2;
  init({}, options);
  reset();
  reset();
  EXPECT_EQ(errorCode(call(request(1, "reset", "{}"))), kCode(Code::kBusy));
  ConnectionEpisodes other;
  EXPECT_TRUE(result(call(request(1, "reset", "{}"), &other)));
  dispatcher_->closeAll(episodes_);
  dispatcher_->closeAll(other);
  EXPECT_EQ(fake_->environment().openEpisodes(), 0u);
}

} // namespace
} // namespace mlgo::server
