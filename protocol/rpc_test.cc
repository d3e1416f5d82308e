//===- protocol/rpc_test.cc -----------------------------------------------===//
#include "mlgo/protocol/rpc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::protocol::rpc {
namespace {

using ::testing::HasSubstr;

const BadRequest& bad(const Item& item) { return std::get<BadRequest>(item); }
const Request& good(const Item& item) { return std::get<Request>(item); }

TEST(Rpc, DecodesARequest) {
  auto line = decodeLine(R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1}})");
  ASSERT_FALSE(line.batch);
  ASSERT_EQ(line.items.size(), 1u);
  const auto& r = good(line.items[0]);
  EXPECT_EQ(r.method, "step");
  ASSERT_TRUE(r.id);
  EXPECT_EQ(r.id->getAsInteger(), 7);
  EXPECT_EQ(*requireInt(r.params, "episode"), 3);
}

TEST(Rpc, NotificationsHaveNoId) {
  auto line = decodeLine(R"({"jsonrpc":"2.0","method":"describe"})");
  EXPECT_FALSE(good(line.items[0]).id);
  EXPECT_TRUE(good(line.items[0]).params.empty());
}

TEST(Rpc, ErrorsCarryStableCodes) {
  struct Case {
    const char* line;
    Code code;
    const char* message;
  } cases[] = {
      {"{nope", Code::kParseError, "invalid JSON"},
      {"", Code::kParseError, "invalid JSON"},
      {"[]", Code::kInvalidRequest, "empty batch"},
      {"42", Code::kInvalidRequest, "must be a JSON object"},
      {R"({"id":1,"method":"describe"})", Code::kInvalidRequest, "'jsonrpc' must be \"2.0\""},
      {R"({"jsonrpc":"1.0","id":1,"method":"describe"})", Code::kInvalidRequest, "'jsonrpc'"},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", Code::kInvalidRequest, "'method' must be"},
      {R"({"jsonrpc":"2.0","id":[1],"method":"x"})", Code::kInvalidRequest, "'id' must be"},
      {R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})", Code::kInvalidParams,
       "'params' must be an object"},
  };
  for (const auto& c : cases) {
    auto line = decodeLine(c.line);
    ASSERT_EQ(line.items.size(), 1u) << c.line;
    EXPECT_EQ(bad(line.items[0]).code, c.code) << c.line;
    EXPECT_THAT(bad(line.items[0]).message, HasSubstr(c.message)) << c.line;
  }
  // The id is echoed when it could be read.
  auto line = decodeLine(R"({"jsonrpc":"2.0","id":"abc","method":1})");
  EXPECT_EQ(bad(line.items[0]).id.getAsString(), "abc");
}

TEST(Rpc, BatchesDecodeEachElement) {
  auto line = decodeLine(R"([{"jsonrpc":"2.0","id":1,"method":"a"},5,{"jsonrpc":"2.0","method":"b"}])");
  ASSERT_TRUE(line.batch);
  ASSERT_EQ(line.items.size(), 3u);
  EXPECT_EQ(good(line.items[0]).method, "a");
  EXPECT_EQ(bad(line.items[1]).code, Code::kInvalidRequest);
  EXPECT_EQ(good(line.items[2]).method, "b");
  auto tooMany = decodeLine("[1,2,3]", 2);
  EXPECT_FALSE(tooMany.batch);
  EXPECT_THAT(bad(tooMany.items[0]).message, HasSubstr("exceeds the limit of 2"));
}

TEST(Rpc, EncodesResponses) {
  EXPECT_EQ(encodeResult(1, llvm::json::Object{{"x", 2}}),
            R"({"jsonrpc":"2.0","id":1,"result":{"x":2}})");
  EXPECT_EQ(encodeRawResult("q", R"({"observation":{}})"),
            R"({"jsonrpc":"2.0","id":"q","result":{"observation":{}}})");
  EXPECT_EQ(encodeError(nullptr, Code::kUnknownEpisode, "unknown episode 9"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"unknown episode 9"}})");
  EXPECT_EQ(joinBatch({"1", "2"}), "[1,2]");
  EXPECT_EQ(codeName(Code::kInvalidAction), "invalid_action");
}

TEST(Rpc, ParameterAccessorsNameTheParameter) {
  llvm::json::Object params{{"episode", "x"}, {"seed", 1.5}, {"module", 3}, {"flag", 1}};
  EXPECT_THAT(requireInt(params, "episode").error().message(),
              HasSubstr("parameter 'episode' must be an integer"));
  EXPECT_THAT(requireInt(params, "missing").error().message(),
              HasSubstr("missing integer parameter 'missing'"));
  EXPECT_FALSE(optionalInt(params, "seed").ok());
  EXPECT_FALSE(optionalString(params, "module").ok());
  EXPECT_FALSE(optionalBool(params, "flag").ok());
  EXPECT_FALSE(optionalInt(params, "absent")->has_value());
}

} // namespace
} // namespace mlgo::protocol::rpc
