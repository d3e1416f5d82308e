//===- server/listen_address_test.cc - --listen parsing -------------------===//
#include "mlgo/server/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::server {
namespace {

using ::testing::HasSubstr;
using Kind = ListenAddress::Kind;

TEST(ListenAddress, StdioByDefault) {
  for (std::string_view text : {"", "stdio"}) {
    auto address = parseListenAddress(text);
    ASSERT_TRUE(address.ok());
    EXPECT_EQ(address->kind, Kind::kStdio);
  }
}

TEST(ListenAddress, TcpLoopbackAndOthers) {
  auto local = parseListenAddress("127.0.0.1:5555");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->kind, Kind::kTcp);
  EXPECT_EQ(local->host, "127.0.0.1");
  EXPECT_EQ(local->port, 5555);
  EXPECT_TRUE(local->loopback);

  for (std::string_view text : {":0", "localhost:0"}) {
    auto address = parseListenAddress(text);
    ASSERT_TRUE(address.ok()) << text;
    EXPECT_EQ(address->host, "127.0.0.1");
    EXPECT_TRUE(address->loopback);
  }
  auto v6 = parseListenAddress("[::1]:80");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->loopback);

  auto any = parseListenAddress("0.0.0.0:65535");
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->loopback);
  EXPECT_EQ(any->port, 65535);
}

TEST(ListenAddress, UnixSockets) {
  auto address = parseListenAddress("unix:/tmp/mlgo.sock");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->kind, Kind::kUnix);
  EXPECT_EQ(address->path, "/tmp/mlgo.sock");
  EXPECT_FALSE(parseListenAddress("unix:").ok());
  auto tooLong = parseListenAddress("unix:/" + std::string(200, 'x'));
  ASSERT_FALSE(tooLong.ok());
  EXPECT_THAT(tooLong.error().message(), HasSubstr("longer than"));
}

TEST(ListenAddress, MalformedOnesAreRefusedNamingWhy) {
  for (std::string_view text : {"5555", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                                "127.0.0.1:80x", "example.org:80", "1.2.3:80"}) {
    auto address = parseListenAddress(text);
    ASSERT_FALSE(address.ok()) << text;
    EXPECT_EQ(address.error().code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_THAT(address.error().message(), HasSubstr("--listen")) << text;
  }
}

} // namespace
} // namespace mlgo::server
