//===- protocol/tensor_spec_test.cc ---------------------------------------===//
#include "mlgo/protocol/tensor_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::protocol {
namespace {

using ::testing::HasSubstr;

TEST(TensorSpec, AllTenSpellingsRoundTrip) {
  const std::pair<const char*, size_t> expected[] = {
      {"float", 4},   {"double", 8},   {"int8_t", 1},  {"uint8_t", 1}, {"int16_t", 2},
      {"uint16_t", 2}, {"int32_t", 4}, {"uint32_t", 4}, {"int64_t", 8}, {"uint64_t", 8}};
  ASSERT_EQ(std::size(kAllElementTypes), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    ElementType type = kAllElementTypes[i];
    EXPECT_EQ(spelling(type), expected[i].first);
    EXPECT_EQ(elementSize(type), expected[i].second);
    EXPECT_EQ(parseElementType(expected[i].first), type);
    auto spec = TensorSpec::create("t", type, {2, 3});
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(spec->byteSize(), 6 * expected[i].second);
    auto back = TensorSpec::fromJson(spec->toJson());
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(*back, *spec);
  }
  EXPECT_FALSE(parseElementType("int128_t"));
  EXPECT_FALSE(parseElementType("Float"));
}

TEST(TensorSpec, JsonIsLlvmsExactSpelling) {
  auto spec = TensorSpec::create("mask", ElementType::kInt64, {1, 33});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->toJson(), R"({"name":"mask","type":"int64_t","port":0,"shape":[1,33]})");
  auto scalar = TensorSpec::create("progress", ElementType::kFloat, {}, 3);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->toJson(), R"({"name":"progress","type":"float","port":3,"shape":[]})");
  EXPECT_EQ(scalar->elementCount(), 1u);
}

TEST(TensorSpec, ParsesAnyFieldOrderAndDefaultsPort) {
  auto spec = TensorSpec::fromJson(R"( { "shape" : [4], "type":"uint8_t", "name":"x" } )");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->name(), "x");
  EXPECT_EQ(spec->port(), 0);
  EXPECT_EQ(spec->type(), ElementType::kUInt8);
  EXPECT_EQ(spec->byteSize(), 4u);
}

TEST(TensorSpec, RejectsMalformedSpecs) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"name":"a","type":"int128_t","shape":[1]})", "unknown element type 'int128_t'"},
      {R"({"type":"float","shape":[1]})", "missing string field 'name'"},
      {R"({"name":"a","shape":[1]})", "missing string field 'type'"},
      {R"({"name":"a","type":"float"})", "missing array field 'shape'"},
      {R"({"name":"a","type":"float","shape":[-1]})", "dimension 0 is negative"},
      {R"({"name":"a","type":"float","shape":[1.5]})", "shape entries must be integers"},
      {R"({"name":"a","type":"float","port":-2,"shape":[1]})", "'port' must be"},
      {R"({"name":"a","type":"float","shape":[4294967296,4294967296]})", "overflows 64 bits"},
      {R"({"name":"a","type":"double","shape":[4611686018427387904]})", "overflows 64 bits"},
      {R"([1,2])", "expected a JSON object"},
      {R"({"name":"a",)", "invalid JSON"},
  };
  for (const auto& c : cases) {
    auto spec = TensorSpec::fromJson(c.json);
    ASSERT_FALSE(spec.ok()) << c.json;
    EXPECT_THAT(spec.error().message(), HasSubstr(c.message)) << c.json;
    EXPECT_EQ(spec.error().code(), ErrorCode::kParse);
  }
}

TEST(TensorSpec, ElementAccessors) {
  const float f[] = {1.5f, -2.0f};
  const int64_t i[] = {-7, 1LL << 40};
  const uint8_t u[] = {255};
  auto fb = reinterpret_cast<const std::byte*>(f);
  auto ib = reinterpret_cast<const std::byte*>(i);
  EXPECT_EQ(elementAsDouble(ElementType::kFloat, fb, 1), -2.0);
  EXPECT_EQ(elementAsDouble(ElementType::kInt64, ib, 0), -7.0);
  std::string text;
  appendElementText(text, ElementType::kInt64, ib, 1);
  text += ' ';
  appendElementText(text, ElementType::kFloat, fb, 0);
  text += ' ';
  appendElementText(text, ElementType::kUInt8, reinterpret_cast<const std::byte*>(u), 0);
  EXPECT_EQ(text, "1099511627776 1.5 255");
}

} // namespace
} // namespace mlgo::protocol
