//===- protocol/rpc_test.cc -----------------------------------------------===//
#include "mlgo/protocol/rpc.h"

#include <cmath>
#include <limits>

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
  EXPECT_EQ(r.id->json, "7");
  EXPECT_EQ(*requireInt(r.paramsObject(), "episode"), 3);
  ASSERT_TRUE(r.compact); // The compact form: params stay empty.
  EXPECT_EQ(r.compact->action, 1);
}

// Step lines in our clients' compact form skip the JSON parser; a leading
// space sends the same text through it. Both must decode the same request,
// and near-misses must reach the parser (and its errors).
TEST(Rpc, CompactStepLinesDecodeAsTheParserDecodesThem) {
  const char* lines[] = {
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1}})",
      R"({"jsonrpc":"2.0","id":0,"method":"step","params":{"episode":0,"action":0}})",
      R"({"jsonrpc":"2.0","id":123456789012345678,"method":"no_such","params":{"episode":99,"action":32}})",
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":-1}})",
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1.5}})",
      R"({"jsonrpc":"2.0","id":07,"method":"step","params":{"episode":3,"action":1}})",
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1}} )",
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1}}})",
      R"({"jsonrpc":"2.0","id":1234567890123456789,"method":"step","params":{"episode":3,"action":1}})",
      R"({"jsonrpc":"2.0","id":7,"method":"step","params":{"episode":3,"action":1,"x":2}})",
  };
  for (const char* text : lines) {
    auto fast = decodeLine(text);
    auto parsed = decodeLine(std::string(" ") + text);
    ASSERT_EQ(fast.items.size(), parsed.items.size()) << text;
    ASSERT_EQ(fast.items[0].index(), parsed.items[0].index()) << text;
    if (const auto* r = std::get_if<Request>(&fast.items[0])) {
      const auto& p = good(parsed.items[0]);
      EXPECT_EQ(r->id, p.id) << text;
      EXPECT_EQ(r->method, p.method) << text;
      EXPECT_EQ(llvm::json::Value(r->paramsObject()), llvm::json::Value(p.paramsObject()))
          << text;
      EXPECT_TRUE(!r->compact || r->method == "step") << text; // Only steps go compact.
      EXPECT_FALSE(p.compact) << text;
    } else {
      EXPECT_EQ(bad(fast.items[0]).code, bad(parsed.items[0]).code) << text;
    }
  }
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
  EXPECT_EQ(bad(line.items[0]).id.json, "\"abc\"");
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
  EXPECT_EQ(encodeResult(Id::of(1), llvm::json::Object{{"x", 2}}),
            R"({"jsonrpc":"2.0","id":1,"result":{"x":2}})");
  EXPECT_EQ(encodeRawResult(Id::of("q"), R"({"observation":{}})"),
            R"({"jsonrpc":"2.0","id":"q","result":{"observation":{}}})");
  EXPECT_EQ(encodeError(Id{}, Code::kUnknownEpisode, "unknown episode 9"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"unknown episode 9"}})");
  EXPECT_EQ(joinBatch({"1", "2"}), "[1,2]");
  EXPECT_EQ(codeName(Code::kInvalidAction), "invalid_action");
}

TEST(Rpc, NonFiniteNumbersAreWrittenAsNull) {
  // A parsed 1.51e999 is an infinity; llvm::json alone would print `inf`.
  auto line = decodeLine(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1.51e999}})");
  auto params = good(line.items[0]).params;
  llvm::json::Object nested{{"a", llvm::json::Array{std::nan(""), 2.5}}, {"b", std::move(params)}};
  std::string result = encodeResult(Id::of(1), std::move(nested));
  EXPECT_EQ(result, R"({"jsonrpc":"2.0","id":1,"result":{"a":[null,2.5],"b":{"x":null}}})");
  EXPECT_TRUE(static_cast<bool>(llvm::json::parse(result)));
  std::string error = encodeError(Id{}, Code::kInternalError, "m",
                                  llvm::json::Value(-std::numeric_limits<double>::infinity()));
  EXPECT_THAT(error, HasSubstr(R"("data":null)"));
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

TEST(Rpc, IdsAreEchoedByteForByte) {
  for (std::string id : {"1e999", "123456789012345678901234567890", "1.5e-400", "-0", "1E+2",
                         "0.10", "\"caf\\u00e9\"", "\"a\\/b\"", "null", "-12345678901234567890"}) {
    std::string text = R"({"jsonrpc":"2.0", "method":"describe", "id" : )" + id + "}";
    auto line = decodeLine(text);
    ASSERT_EQ(line.items.size(), 1u) << text;
    const auto& r = good(line.items[0]);
    ASSERT_TRUE(r.id) << text;
    EXPECT_EQ(r.id->json, id);
    EXPECT_EQ(encodeRawResult(*r.id, "1"), R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":1})");
    EXPECT_EQ(encodeError(*r.id, Code::kBusy, "m"),
              R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":{"code":-32004,"message":"m"}})");
    // The reply is JSON.
    auto reply = llvm::json::parse(encodeResult(*r.id, 1));
    EXPECT_TRUE(bool(reply)) << id;
    if (!reply)
      llvm::consumeError(reply.takeError());
  }
  // In a batch, each element's own id, also when another member holds "id".
  auto line = decodeLine(
      R"([{"params":{"id":"inner"},"jsonrpc":"2.0","method":"a","id":1e999}, 7,)"
      R"( {"jsonrpc":"2.0","method":"b","\u0069d":30000000000000000000000000001},)"
      R"({"jsonrpc":"2.0","method":"c"}])");
  ASSERT_EQ(line.items.size(), 4u);
  EXPECT_EQ(good(line.items[0]).id->json, "1e999");
  EXPECT_EQ(good(line.items[2]).id->json, "30000000000000000000000000001");
  EXPECT_FALSE(good(line.items[3]).id);
  // An id that is not a number, string or null is refused, and null echoed.
  EXPECT_EQ(bad(decodeLine(R"({"jsonrpc":"2.0","id":{"a":1},"method":"x"})").items[0]).id.json,
            "null");
}

TEST(Rpc, DeepNestingIsRefusedWithoutRecursion) {
  for (std::string open : {"[", "{\"a\":"}) {
    std::string text;
    for (int i = 0; i < 100000; ++i)
      text += open;
    auto line = decodeLine(text);
    ASSERT_EQ(line.items.size(), 1u);
    EXPECT_EQ(bad(line.items[0]).code, Code::kParseError);
    EXPECT_THAT(bad(line.items[0]).message, HasSubstr("nested deeper than 64 levels"));
  }
  // At the limit: parsed. Brackets inside strings do not count.
  std::string atLimit = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":)" +
                        std::string(62, '[') + std::string(62, ']') + R"(,"s":"[[[[[[[["}})";
  auto line = decodeLine(atLimit, 4096, 64);
  EXPECT_EQ(good(line.items[0]).method, "m");
  auto over = decodeLine(atLimit, 4096, 63);
  EXPECT_EQ(bad(over.items[0]).code, Code::kParseError);
}

} // namespace
} // namespace mlgo::protocol::rpc
