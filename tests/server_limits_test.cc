//===- tests/server_limits_test.cc - the server under a descriptor limit --===//
///
/// The server raises its soft RLIMIT_NOFILE to the hard limit, refuses a
/// --max-episodes the limit cannot carry (naming both numbers), and, out of
/// descriptors, backs off in its accept loop instead of spinning. The limit
/// is set with `ulimit -n` in a shell that execs the server. Real clang-22.
///
//===----------------------------------------------------------------------===//
#include "support/server_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace mlgo {
namespace {

using ::testing::HasSubstr;
using testing::LineClient;
using testing::ServerProcess;

std::vector<std::string> withFileLimit(int limit) {
  return {"/bin/sh", "-c", "ulimit -n " + std::to_string(limit) + " && exec \"$0\" \"$@\""};
}

/// User+system CPU time of `pid` in clock ticks.
long cpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14)
      utime = std::stol(field);
    if (i == 15)
      stime = std::stol(field);
  }
  return utime + stime;
}

TEST(ServerLimits, RefusesMaxEpisodesTheLimitCannotCarry) {
  ServerProcess server({"--problem=inlining", "--no-disk-cache", "--jobs=1", "--max-episodes=1024"},
                       {}, withFileLimit(200));
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.exitCode(), 2);
  std::string log = server.log();
  EXPECT_THAT(log, HasSubstr("--max-episodes=1024"));
  EXPECT_THAT(log, HasSubstr("limit (RLIMIT_NOFILE, hard limit included) is 200"));
}

TEST(ServerLimits, OutOfDescriptorsTheAcceptLoopBacksOff) {
  ServerProcess server({"--problem=inlining", "--no-disk-cache", "--jobs=1", "--max-episodes=4"},
                       {}, withFileLimit(200));
  ASSERT_TRUE(server.running()) << server.log();
  std::vector<LineClient> clients;
  for (int i = 0; i < 260; ++i) {
    clients.push_back(server.connect());
    ASSERT_TRUE(clients.back().connected()) << i;
  }
  // The backlog holds connections the server cannot accept any more.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  long before = cpuTicks(server.pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  long used = cpuTicks(server.pid()) - before;
  long perSecond = ::sysconf(_SC_CLK_TCK);
  // Spinning costs most of a core (38 of 100 ticks measured on a busy 2-core
  // machine); backing off costs next to nothing (0-1 ticks).
  EXPECT_LT(used, perSecond / 10) << "the server spun on EMFILE: " << used << " ticks in 1 s";
  std::fprintf(stderr, "server CPU while out of descriptors: %ld of %ld ticks\n", used, perSecond);
  EXPECT_THAT(server.log(), HasSubstr("cannot accept a connection"));
  // Once connections go, it serves again.
  clients.clear();
  LineClient fresh = server.connect();
  ASSERT_TRUE(fresh.connected());
  std::string reply = fresh.call(R"({"jsonrpc":"2.0","id":1,"method":"describe"})");
  EXPECT_THAT(reply, HasSubstr("\"protocol_version\""));
}

TEST(ServerLimits, EpisodesPerConnectionAreBounded) {
  ServerProcess server(
      {"--problem=inlining", "--no-disk-cache", "--jobs=2", "--max-episodes-per-connection=2"});
  ASSERT_TRUE(server.running()) << server.log();
  auto reset = [](int id) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
           ",\"method\":\"reset\",\"params\":{\"module\":\"sha256.o\"}}";
  };
  LineClient greedy = server.connect();
  // One batch of four resets: two episodes open, two are refused as busy.
  std::string batch = "[" + reset(1) + "," + reset(2) + "," + reset(3) + "," + reset(4) + "]";
  std::string reply = greedy.call(batch);
  size_t opened = 0, busy = 0;
  for (size_t at = reply.find("\"observation\""); at != std::string::npos;
       at = reply.find("\"observation\"", at + 1))
    ++opened;
  for (size_t at = reply.find("-32004"); at != std::string::npos; at = reply.find("-32004", at + 1))
    ++busy;
  EXPECT_EQ(opened, 2u) << reply.substr(0, 300);
  EXPECT_EQ(busy, 2u) << reply.substr(0, 300);
  EXPECT_THAT(reply, HasSubstr("--max-episodes-per-connection"));
  // Another connection has places of its own.
  LineClient other = server.connect();
  EXPECT_THAT(other.call(reset(5)), HasSubstr("\"observation\""));
}

} // namespace
} // namespace mlgo
