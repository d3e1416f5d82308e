//===- policy/policy_writer_test.cc - policies written as the file's JSON ---===//
#include "mlgo/policy/json_text.h"
#include "policy_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace mlgo::policy {
namespace {

using namespace mlgo::policy::testing;
using ::testing::HasSubstr;

/// Bit-for-bit equality of two doubles (-0.0 differs from 0.0, NaN equals NaN).
bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expectSameParameters(const Policy& a, const Policy& b) {
  EXPECT_EQ(a.problem(), b.problem());
  EXPECT_EQ(a.features(), b.features());
  EXPECT_EQ(a.transforms(), b.transforms());
  EXPECT_EQ(a.decision(), b.decision());
  EXPECT_EQ(a.margin().has_value(), b.margin().has_value());
  auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(sameBits(x[i], y[i])) << x[i] << " " << y[i];
  };
  same(a.mean(), b.mean());
  same(a.stdDev(), b.stdDev());
  ASSERT_EQ(a.layers().size(), b.layers().size());
  for (size_t l = 0; l < a.layers().size(); ++l) {
    same(a.layers()[l].weights, b.layers()[l].weights);
    same(a.layers()[l].bias, b.layers()[l].bias);
    EXPECT_EQ(a.layers()[l].activation, b.layers()[l].activation);
  }
}

TEST(PolicyWriterTest, NumbersAreTheShortestTextThatReadsBack) {
  EXPECT_EQ(numberText(0.0), "0");
  EXPECT_EQ(numberText(-0.0), "-0.0");
  EXPECT_EQ(numberText(-3.0), "-3");
  EXPECT_EQ(numberText(1.5), "1.5");
  EXPECT_EQ(numberText(0.1), "0.1");
  EXPECT_EQ(numberText(1e-05), "1e-05");
  EXPECT_EQ(numberText(1e20), "1e+20");
  EXPECT_EQ(numberText(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(numberText(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(numberText(-std::numeric_limits<double>::infinity()), "-Infinity");
  for (double v : {0.1, 1.0 / 3, -2.5e-300, 1.7976931348623157e308, 5e-324, 123456.789}) {
    auto back = llvm::json::parse(numberText(v));
    ASSERT_TRUE(static_cast<bool>(back));
    EXPECT_TRUE(sameBits(*back->getAsNumber(), v)) << numberText(v);
  }
}

TEST(PolicyWriterTest, ValuesShowAsJson) {
  using llvm::json::Array;
  EXPECT_EQ(shownValue(nullptr), "null");
  llvm::json::Value list = Array{1, "a\"b\n", nullptr, true, 2.5, Array{}};
  EXPECT_EQ(shownValue(&list), R"([1, "a\"b\n", null, true, 2.5, []])");
  llvm::json::Value object = llvm::json::Object{{"b", 1}, {"a", llvm::json::Object{}}};
  EXPECT_EQ(shownValue(&object), R"({"a": {}, "b": 1})");
  llvm::json::Value control = "\x01";
  EXPECT_EQ(shownValue(&control), "\"\\u0001\"");
  llvm::json::Value big = std::string(100, 'x');
  EXPECT_EQ(shownValue(&big), "\"" + std::string(56, 'x') + "...");
  auto parsed = llvm::json::parse("[18446744073709551615, -9223372036854775808, -2.0, 4.0]");
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_EQ(shownValue(&*parsed), "[18446744073709551615, -9223372036854775808, -2, 4]");
}

TEST(PolicyWriterTest, IndentedTextBreaksWhatDoesNotFitALine) {
  using llvm::json::Array;
  llvm::json::Value short_ = llvm::json::Object{{"a", Array{1, 2}}, {"b", "x"}};
  EXPECT_EQ(jsonText(short_, true), R"({"a": [1, 2], "b": "x"})");
  Array longRow;
  for (int i = 0; i < 40; ++i)
    longRow.push_back(i + 0.5);
  llvm::json::Value long_ = llvm::json::Object{{"w", Array{std::move(longRow), Array{1}}}};
  std::string text = jsonText(long_, true);
  EXPECT_THAT(text, ::testing::StartsWith("{\n \"w\": [\n  [\n   0.5,\n   1.5,\n"));
  EXPECT_THAT(text, ::testing::EndsWith("   39.5\n  ],\n  [1]\n ]\n}"));
  std::string_view order[] = {"b", "a"};
  EXPECT_EQ(jsonText(short_, false, 0, order), R"({"b": "x", "a": [1, 2]})");
}

TEST(PolicyWriterTest, TheOldestVersionThatHoldsThePolicyIsWritten) {
  auto margin = parseObject(marginPolicy(1.0));
  ASSERT_TRUE(margin.ok());
  EXPECT_EQ(*margin->toJson().getAsObject()->getInteger("version"), 2);
  auto eviction = parseObject(evictionPolicy());
  ASSERT_TRUE(eviction.ok());
  llvm::json::Value written = eviction->toJson();
  const llvm::json::Object& v3 = *written.getAsObject();
  EXPECT_EQ(*v3.getInteger("version"), 3);
  EXPECT_EQ(*v3.getString("mask"), "mask");
  // Version 3 read, but every transform signed-log1p, no margin, logit>0: version 1.
  auto obj = marginPolicy(1.0);
  obj["version"] = 3;
  obj.erase("margin");
  obj["transforms"] = llvm::json::Array{"signed-log1p", "signed-log1p", "signed-log1p",
                                        "signed-log1p"};
  (*(*obj.getArray("layers"))[0].getAsObject())["weights"] =
      llvm::json::Array{llvm::json::Array{1}, llvm::json::Array{0}, llvm::json::Array{0},
                        llvm::json::Array{-0.0}};
  auto plain = Policy::fromJson(llvm::json::Value(std::move(obj)), "policy 'p.json'");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  written = plain->toJson();
  const llvm::json::Object& v1 = *written.getAsObject();
  EXPECT_EQ(*v1.getInteger("version"), 1);
  EXPECT_EQ(*v1.getString("transform"), "signed-log1p");
  EXPECT_EQ(v1.get("transforms"), nullptr);
  auto text = plain->text();
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("\"weights\": [[1], [0], [0], [-0.0]]"));
  EXPECT_EQ(text->back(), '\n');
}

TEST(PolicyWriterTest, EveryGoldenPolicyReadsBackToTheBit) {
  auto folder = std::filesystem::path(MLGO_SOURCE_DIR) / "tests" / "data" / "policies" / "valid";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    SCOPED_TRACE(entry.path().string());
    auto policy = Policy::load(entry.path());
    ASSERT_TRUE(policy.ok()) << policy.error().message();
    auto text = policy->text();
    ASSERT_TRUE(text.ok()) << text.error().message();
    auto again = Policy::parse(*text, "again");
    ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << *text;
    expectSameParameters(*policy, *again);
    EXPECT_EQ(again->version(), policy->toJson().getAsObject()->getInteger("version"));
    EXPECT_EQ(*again->text(), *text);
    EXPECT_EQ(again->metadata(), policy->metadata());
    ++files;
  }
  EXPECT_GE(files, 9u);
}

TEST(PolicyWriterTest, MetadataThatJsonCannotHoldIsRefused) {
  auto obj = marginPolicy(1.0);
  obj["metadata"] = llvm::json::Object{{"score", std::numeric_limits<double>::infinity()}};
  auto policy = Policy::fromJson(llvm::json::Value(std::move(obj)), "policy 'p.json'");
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  auto text = policy->text();
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(text.error().message(),
            "policy 'p.json': 'metadata' holds NaN or an infinity, which JSON cannot hold");
}

} // namespace
} // namespace mlgo::policy
