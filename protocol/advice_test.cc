//===- protocol/advice_test.cc --------------------------------------------===//
#include "mlgo/protocol/advice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mlgo::protocol {
namespace {

using ::testing::HasSubstr;

TensorSpec spec(ElementType type, std::vector<int64_t> shape = {1}) {
  return *TensorSpec::create("advice", type, std::move(shape));
}

TEST(Advice, Int64IsLittleEndianBytes) {
  auto bytes = encodeScalarAdvice(spec(ElementType::kInt64), int64_t{0x0102030405060708});
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 8u);
  EXPECT_EQ((*bytes)[0], std::byte{0x08});
  EXPECT_EQ((*bytes)[7], std::byte{0x01});
}

TEST(Advice, Float32FromIntegerAndDouble) {
  auto a = encodeScalarAdvice(spec(ElementType::kFloat), int64_t{3});
  auto b = encodeScalarAdvice(spec(ElementType::kFloat), 3.0);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 4u);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(loadElement<float>(a->data(), 0), 3.0f);
  auto big = encodeScalarAdvice(spec(ElementType::kFloat), 4294967295.0);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(loadElement<float>(big->data(), 0), 4294967296.0f);
}

TEST(Advice, RejectsUnrepresentableValues) {
  EXPECT_THAT(encodeScalarAdvice(spec(ElementType::kInt64), 1.5).error().message(),
              HasSubstr("not representable as int64_t"));
  EXPECT_FALSE(encodeScalarAdvice(spec(ElementType::kInt64), std::nan("")).ok());
  EXPECT_FALSE(encodeScalarAdvice(spec(ElementType::kInt64), 9223372036854775808.0).ok());
  EXPECT_TRUE(encodeScalarAdvice(spec(ElementType::kInt64), -9223372036854775808.0).ok());
  EXPECT_FALSE(encodeScalarAdvice(spec(ElementType::kUInt8), int64_t{256}).ok());
  EXPECT_FALSE(encodeScalarAdvice(spec(ElementType::kUInt64), int64_t{-1}).ok());
  EXPECT_FALSE(encodeScalarAdvice(spec(ElementType::kFloat), 1e300).ok());
  EXPECT_TRUE(encodeScalarAdvice(spec(ElementType::kFloat),
                                 std::numeric_limits<double>::infinity()).ok());
}

TEST(Advice, ChecksElementCount) {
  auto two = spec(ElementType::kInt32, {2});
  std::vector<std::byte> out(8);
  const int64_t values[] = {1, -2};
  ASSERT_TRUE(encodeAdvice(two, values, out).ok());
  EXPECT_EQ(loadElement<int32_t>(out.data(), 1), -2);
  const int64_t one[] = {1};
  EXPECT_THAT(encodeAdvice(two, one, out).error().message(), HasSubstr("takes 2 value(s), got 1"));
}

TEST(Advice, EveryTypeEncodesItsOwnSize) {
  for (ElementType type : kAllElementTypes) {
    auto bytes = encodeScalarAdvice(spec(type), int64_t{1});
    ASSERT_TRUE(bytes.ok()) << spelling(type);
    EXPECT_EQ(bytes->size(), elementSize(type));
    EXPECT_EQ(elementAsDouble(type, bytes->data(), 0), 1.0) << spelling(type);
  }
}

} // namespace
} // namespace mlgo::protocol
