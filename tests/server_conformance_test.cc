//===- tests/server_conformance_test.cc - the agent protocol, end to end --===//
///
/// Runs `mlgo-env serve` on a Unix socket over the demo corpus (real clang-22)
/// and checks every method, every error code, and the bad-input behaviour: the
/// server keeps answering `describe` after each.
///
//===----------------------------------------------------------------------===//
#include "support/server_process.h"

#include <llvm/Support/JSON.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

namespace mlgo {
namespace {

using ::testing::HasSubstr;
using testing::LineClient;
using testing::ServerProcess;

llvm::json::Object parse(const std::string& line) {
  auto value = llvm::json::parse(line);
  if (!value) {
    llvm::consumeError(value.takeError());
    ADD_FAILURE() << "not JSON: " << line.substr(0, 300);
    return {};
  }
  auto* object = value->getAsObject();
  return object ? std::move(*object) : llvm::json::Object{};
}

int64_t errorCode(const std::string& line) {
  auto reply = parse(line);
  auto* error = reply.getObject("error");
  return error ? error->getInteger("code").value_or(0) : 0;
}

std::string request(int id, const std::string& method, const std::string& params = "{}") {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"" + method +
         "\",\"params\":" + params + "}";
}

void expectDescribeWorks(LineClient& client) {
  auto reply = parse(client.call(request(99, "describe")));
  auto* result = reply.getObject("result");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->getString("problem").value_or(""), "inlining");
}

class Conformance : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--problem=inlining", "--no-disk-cache", "--jobs=2",
                                 "--max-line-bytes=1048576"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(server_->running()) << server_->log();
    client_ = server_->connect();
    ASSERT_TRUE(client_.connected());
  }
  static ServerProcess* server_;
  LineClient client_;
};
ServerProcess* Conformance::server_ = nullptr;

TEST_F(Conformance, DescribeListsSpecsAndCorpus) {
  auto reply = parse(client_.call(request(1, "describe")));
  EXPECT_EQ(reply.getString("jsonrpc").value_or(""), "2.0");
  EXPECT_EQ(reply.getInteger("id"), 1);
  auto* result = reply.getObject("result");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->getInteger("protocol_version"), 1);
  auto* specs = result->getArray("observation_spec");
  ASSERT_NE(specs, nullptr);
  EXPECT_GE(specs->size(), 38u);
  EXPECT_EQ(result->getObject("action_spec")->getString("name").value_or(""),
            "inlining_decision");
  EXPECT_GE(result->getObject("corpus")->getInteger("modules").value_or(0), 25);
  EXPECT_THAT(result->getObject("clang")->getString("version").value_or("").str(),
              HasSubstr("22."));
}

TEST_F(Conformance, ResetStepCloseAndInvalidActions) {
  auto reset = parse(client_.call(request(1, "reset", R"({"module":"sha256.o"})")));
  auto* result = reset.getObject("result");
  ASSERT_NE(result, nullptr);
  int64_t episode = *result->getInteger("episode");
  EXPECT_EQ(result->getString("module").value_or(""), "sha256.o");
  ASSERT_NE(result->getObject("observation"), nullptr);
  EXPECT_EQ(result->getObject("info")->getInteger("default_action").has_value(), true);

  std::string ep = std::to_string(episode);
  // Invalid actions: each rejected with invalid_action; the episode survives.
  for (const char* bad : {"2", "-1", "0.5", "[1,0]", "\"yes\"", "[]"}) {
    auto line = client_.call(request(2, "step", "{\"episode\":" + ep + ",\"action\":" + bad + "}"));
    EXPECT_EQ(errorCode(line), -32001) << bad << ": " << line;
  }
  // Valid steps until the end, following clang's default: reward 0.
  bool done = false;
  int steps = 0;
  double reward = -1;
  int64_t action = *result->getObject("info")->getInteger("default_action");
  while (!done && steps < 10000) {
    auto step = parse(client_.call(request(3, "step", "{\"episode\":" + ep + ",\"action\":" +
                                                          std::to_string(action) + "}")));
    auto* r = step.getObject("result");
    ASSERT_NE(r, nullptr);
    ++steps;
    done = *r->getBoolean("terminated") || *r->getBoolean("truncated");
    reward = *r->getNumber("reward");
    if (!done)
      action = *r->getObject("info")->getInteger("default_action");
    else {
      auto* info = r->getObject("info");
      EXPECT_EQ(*info->getNumber("policy_score"), *info->getNumber("default_score"));
      EXPECT_EQ(r->get("observation")->kind(), llvm::json::Value::Null);
    }
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(reward, 0.0);
  // The episode is gone once ended.
  EXPECT_EQ(errorCode(client_.call(request(4, "step", "{\"episode\":" + ep + ",\"action\":0}"))),
            -32002);
  EXPECT_EQ(errorCode(client_.call(request(5, "close", "{\"episode\":" + ep + "}"))), -32002);
}

TEST_F(Conformance, CloseEndsAnEpisode) {
  auto reset = parse(client_.call(request(1, "reset", R"({"module":"bignum.o","encoding":"base64"})")));
  auto* result = reset.getObject("result");
  ASSERT_NE(result, nullptr);
  // base64: tensors are strings.
  auto* obs = result->getObject("observation");
  ASSERT_NE(obs, nullptr);
  EXPECT_TRUE(obs->getString("callee_users").has_value());
  std::string ep = std::to_string(*result->getInteger("episode"));
  auto closed = parse(client_.call(request(2, "close", "{\"episode\":" + ep + "}")));
  ASSERT_NE(closed.getObject("result"), nullptr);
  EXPECT_EQ(closed.getObject("result")->getBoolean("closed"), true);
  EXPECT_EQ(errorCode(client_.call(request(3, "step", "{\"episode\":" + ep + ",\"action\":1}"))),
            -32002);
}

TEST_F(Conformance, EveryRequestErrorCode) {
  struct Case {
    std::string line;
    int64_t code;
  } cases[] = {
      {"{not json", -32700},
      {"[]", -32600},
      {R"({"id":1,"method":"describe"})", -32600},
      {request(1, "fly"), -32601},
      {request(1, "reset", R"({"module":"no_such_module.o"})"), -32602},
      {request(1, "reset", R"({"module":7})"), -32602},
      {request(1, "reset", R"({"seed":"x"})"), -32602},
      {request(1, "reset", R"({"encoding":"hex"})"), -32602},
      {request(1, "reset", R"({"options":{"max_steps":-3}})"), -32602},
      {request(1, "step", R"({"episode":"x","action":1})"), -32602},
      {request(1, "step", R"({"action":1})"), -32602},
      {request(1, "step", R"({"episode":123456,"action":1})"), -32002},
      {request(1, "close", R"({"episode":123456})"), -32002},
      {R"({"jsonrpc":"2.0","id":1,"method":"describe","params":[1]})", -32602},
  };
  for (const auto& c : cases) {
    std::string reply = client_.call(c.line);
    EXPECT_EQ(errorCode(reply), c.code) << c.line << " -> " << reply;
    auto* error = parse(reply).getObject("error");
    ASSERT_NE(error, nullptr);
    EXPECT_FALSE(error->getString("message").value_or("").empty());
  }
  expectDescribeWorks(client_);
}

TEST_F(Conformance, BatchesNotificationsAndBlankLines) {
  std::string batch = "[" + request(1, "describe") + "," +
                      R"({"jsonrpc":"2.0","method":"describe"})" + "," + request(2, "fly") +
                      ",5]";
  auto reply = llvm::json::parse(client_.call(batch));
  ASSERT_TRUE(static_cast<bool>(reply));
  auto* array = reply->getAsArray();
  ASSERT_NE(array, nullptr);
  ASSERT_EQ(array->size(), 3u); // The notification gets no response.
  EXPECT_EQ((*array)[0].getAsObject()->getInteger("id"), 1);
  EXPECT_EQ((*array)[1].getAsObject()->getObject("error")->getInteger("code"), -32601);
  EXPECT_EQ((*array)[2].getAsObject()->getObject("error")->getInteger("code"), -32600);
  // A lone notification and a blank line produce nothing; the next answer is ours.
  ASSERT_TRUE(client_.sendLine(R"({"jsonrpc":"2.0","method":"describe"})"));
  ASSERT_TRUE(client_.sendLine(""));
  expectDescribeWorks(client_);
}

TEST_F(Conformance, DeeplyNestedLineGetsAnErrorNotACrash) {
  // The issue's repro: 100,000 '[' in one line (~100 KB).
  std::string reply = client_.call(std::string(100000, '['));
  EXPECT_EQ(errorCode(reply), -32700) << reply.substr(0, 200);
  EXPECT_THAT(reply, HasSubstr("nested deeper than"));
  expectDescribeWorks(client_);
}

TEST_F(Conformance, IdsComeBackByteForByte) {
  for (std::string id : {"1e999", "123456789012345678901234567890", "1.5e-400", "\"caf\\u00e9\""}) {
    std::string reply =
        client_.call(R"({"jsonrpc":"2.0","method":"describe","id":)" + id + "}");
    EXPECT_EQ(reply.substr(0, 22 + id.size() + 1), R"({"jsonrpc":"2.0","id":)" + id + ",")
        << reply.substr(0, 100);
    parse(reply); // Fails the test unless the reply is JSON.
    std::string error = client_.call(R"({"jsonrpc":"2.0","method":"fly","id":)" + id + "}");
    EXPECT_EQ(error.substr(0, 22 + id.size() + 1), R"({"jsonrpc":"2.0","id":)" + id + ",")
        << error;
  }
}

TEST_F(Conformance, ResetOrStepAsNotificationIsRefusedAndOpensNothing) {
  auto before = server_->children();
  ASSERT_TRUE(client_.sendLine(R"({"jsonrpc":"2.0","method":"reset","params":{"module":"sha256.o"}})"));
  std::string reply = client_.readLine().value_or("<eof>");
  EXPECT_EQ(errorCode(reply), -32600) << reply;
  EXPECT_THAT(reply, HasSubstr("notification"));
  EXPECT_THAT(reply, HasSubstr("\"id\":null"));
  ASSERT_TRUE(client_.sendLine(R"({"jsonrpc":"2.0","method":"step","params":{"episode":1,"action":0}})"));
  EXPECT_EQ(errorCode(client_.readLine().value_or("<eof>")), -32600);
  // No clang was started for it.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (pid_t child : server_->children()) {
    if (std::find(before.begin(), before.end(), child) != before.end())
      continue;
    std::ifstream in("/proc/" + std::to_string(child) + "/cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(cmd.find("interactive"), std::string::npos) << "a clang runs: pid " << child;
  }
  expectDescribeWorks(client_);
}

TEST_F(Conformance, HundredMegabyteLineIsRefusedAndServerKeepsServing) {
  std::string huge(100 << 20, 'x');
  std::thread writer([&] { client_.send(huge + "\n"); });
  auto reply = client_.readLine();
  writer.join();
  ASSERT_TRUE(reply);
  EXPECT_EQ(errorCode(*reply), -32005);
  expectDescribeWorks(client_);
  LineClient other = server_->connect();
  expectDescribeWorks(other);
}

TEST_F(Conformance, EpisodesBelongToTheirConnection) {
  auto reset = parse(client_.call(request(1, "reset", R"({"module":"codecs.o"})")));
  ASSERT_NE(reset.getObject("result"), nullptr);
  std::string ep = std::to_string(*reset.getObject("result")->getInteger("episode"));
  LineClient other = server_->connect();
  EXPECT_EQ(errorCode(other.call(request(1, "step", "{\"episode\":" + ep + ",\"action\":1}"))),
            -32002);
  EXPECT_EQ(errorCode(other.call(request(1, "close", "{\"episode\":" + ep + "}"))), -32002);
  auto closed = parse(client_.call(request(2, "close", "{\"episode\":" + ep + "}")));
  EXPECT_NE(closed.getObject("result"), nullptr);
}

size_t settledChildren(const ServerProcess& server) {
  // Background baseline compiles of earlier tests finish on their own.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!server.children().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return server.children().size();
}

TEST_F(Conformance, VanishedClientsEpisodesAreKilled) {
  auto before = settledChildren(*server_);
  ASSERT_EQ(before, 0u);
  {
    LineClient doomed = server_->connect();
    for (const char* module : {"lz77.o", "huffman.o"}) {
      auto reset = parse(doomed.call(request(1, "reset", std::string("{\"module\":\"") + module + "\"}")));
      ASSERT_NE(reset.getObject("result"), nullptr);
    }
    EXPECT_GE(server_->children().size(), before + 2);
  } // Connection dropped mid-episode.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server_->children().size() > before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server_->children().size(), before);
  expectDescribeWorks(client_);
}

TEST(ServerLifecycle, AgentTimeoutBusySigtermAndSocketMode) {
  ServerProcess server({"--problem=inlining", "--no-disk-cache", "--agent-timeout=0.5",
                        "--max-episodes=1"});
  ASSERT_TRUE(server.running()) << server.log();
  struct stat st;
  ASSERT_EQ(::stat(server.socketPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  LineClient client = server.connect();
  auto reset = parse(client.call(request(1, "reset", R"({"module":"sorting.o"})")));
  ASSERT_NE(reset.getObject("result"), nullptr);
  std::string ep = std::to_string(*reset.getObject("result")->getInteger("episode"));
  // A second open episode is over --max-episodes.
  EXPECT_EQ(errorCode(client.call(request(2, "reset", R"({"module":"rb_tree.o"})"))), -32004);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  auto late = client.call(request(3, "step", "{\"episode\":" + ep + ",\"action\":1}"));
  EXPECT_EQ(errorCode(late), -32003) << late;
  EXPECT_THAT(late, HasSubstr("agent did not answer"));
  EXPECT_EQ(settledChildren(server), 0u);
  // A fresh episode can start now the slot is free; SIGTERM then cleans up.
  auto again = parse(client.call(request(4, "reset", R"({"module":"rb_tree.o"})")));
  ASSERT_NE(again.getObject("result"), nullptr);
  EXPECT_EQ(server.stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(server.socketPath()));
}

} // namespace
} // namespace mlgo
