//===- protocol/observation_codec_test.cc ---------------------------------===//
#include "mlgo/protocol/observation_codec.h"

#include "support/synthetic_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mlgo::protocol {
namespace {

using ::testing::HasSubstr;

std::span<const std::byte> bytes(const auto& array) {
  return std::as_bytes(std::span(array));
}

TEST(ObservationCodec, JsonValuesAreExactAndShortest) {
  LogHeader header;
  header.features.push_back(*TensorSpec::create("i", ElementType::kInt64, {3}));
  header.features.push_back(*TensorSpec::create("f", ElementType::kFloat, {2, 2}));
  header.features.push_back(*TensorSpec::create("u", ElementType::kUInt8, {2}));
  const int64_t i[] = {0, -5, int64_t{1} << 62};
  const float f[] = {0.1f, -0.0f, std::numeric_limits<float>::infinity(), std::nanf("")};
  const uint8_t u[] = {255, 10};
  std::vector<std::span<const std::byte>> tensors = {bytes(i), bytes(f), bytes(u)};
  std::string out;
  appendObservationJson(out, header, tensors, TensorEncoding::kJson);
  EXPECT_EQ(out, R"({"i":[0,-5,4611686018427387904],"f":[0.1,-0,Infinity,NaN],"u":[255,10]})");
  out.clear();
  const bool include[] = {false, false, true};
  appendObservationJson(out, header, tensors, TensorEncoding::kJson, include);
  EXPECT_EQ(out, R"({"u":[255,10]})");
  // The other encodings leave the same features out.
  out.clear();
  appendObservationJson(out, header, tensors, TensorEncoding::kBase64, include);
  EXPECT_EQ(out, R"({"u":"/wo="})");
  const bool middle[] = {false, true, false};
  out.clear();
  appendObservationJson(out, header, tensors, TensorEncoding::kBinary, middle);
  EXPECT_EQ(out, R"({"$frame":16})");
}

TEST(ObservationCodec, Base64RoundTripsRawBytes) {
  // Past 8 bytes the encoder takes six at a time: every length to 100.
  for (size_t n = 0; n < 100; ++n) {
    std::vector<std::byte> data(n);
    for (size_t k = 0; k < n; ++k)
      data[k] = std::byte(k * 37 + 11);
    std::string text;
    appendBase64(text, data);
    EXPECT_EQ(text.size(), (n + 2) / 3 * 4);
    auto back = decodeBase64(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(*back, data);
  }
  std::string text;
  const char hello[] = {'h', 'e', 'l', 'l', 'o'};
  appendBase64(text, bytes(hello));
  EXPECT_EQ(text, "aGVsbG8=");
  text.clear();
  const char longer[] = "hello, world, all 0xff: \xff\xff\xff";
  appendBase64(text, bytes(std::span(longer, sizeof longer - 1)));
  EXPECT_EQ(text, "aGVsbG8sIHdvcmxkLCBhbGwgMHhmZjog////");
  EXPECT_FALSE(decodeBase64("abc").ok());
  EXPECT_FALSE(decodeBase64("ab=c").ok());
  EXPECT_FALSE(decodeBase64("a*bc").ok());
}

TEST(ObservationCodec, Base64VectorPathMatchesThePortableOne) {
  // The vector path takes 24 bytes at a time once 28 are readable: lengths
  // across several blocks and every tail, all byte values, odd alignments.
  std::vector<std::byte> data(700);
  for (size_t k = 0; k < data.size(); ++k)
    data[k] = std::byte((k * 131 + (k >> 8) * 7 + 3) & 0xff);
  for (size_t offset : {0u, 1u, 5u})
    for (size_t n = 0; n + offset <= data.size(); n += (n < 120 ? 1 : 37)) {
      auto piece = std::span<const std::byte>(data).subspan(offset, n);
      std::string fast = "x", portable = "x"; // Appends after what is there.
      appendBase64(fast, piece);
      detail::appendBase64Portable(portable, piece);
      ASSERT_EQ(fast, portable) << "length " << n << " at offset " << offset;
      auto back = decodeBase64(std::string_view(fast).substr(1));
      ASSERT_TRUE(back.ok());
      EXPECT_TRUE(std::equal(back->begin(), back->end(), piece.begin(), piece.end()));
    }
  std::vector<std::byte> all(256 * 3);
  for (size_t k = 0; k < all.size(); ++k)
    all[k] = std::byte(k / 3);
  std::string fast, portable;
  appendBase64(fast, all);
  detail::appendBase64Portable(portable, all);
  EXPECT_EQ(fast, portable);
}

TEST(ObservationCodec, Base64ObservationOfRegallocShape) {
  auto header = mlgo::testing::regallocHeader();
  std::vector<std::byte> data(header.observationBytes(), std::byte{7});
  std::vector<std::span<const std::byte>> tensors;
  size_t at = 0;
  for (const auto& spec : header.features) {
    tensors.push_back(std::span(data).subspan(at, spec.byteSize()));
    at += spec.byteSize();
  }
  std::string out;
  appendObservationJson(out, header, tensors, TensorEncoding::kBase64);
  ObservationJsonWriter writer(header);
  std::string written;
  writer.append(written, tensors, TensorEncoding::kBase64);
  EXPECT_EQ(written, out);
  EXPECT_EQ(writer.base64Size(tensors), out.size());
  auto parsed = llvm::json::parse(out);
  ASSERT_TRUE(static_cast<bool>(parsed));
  auto mask = parsed->getAsObject()->getString("mask");
  ASSERT_TRUE(mask);
  EXPECT_EQ(decodeBase64(mask->str())->size(), 264u);
}

TEST(ObservationCodec, DecodesActions) {
  auto one = decodeAction(llvm::json::Value(3));
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->allIntegral);
  EXPECT_EQ(one->integers, std::vector<int64_t>{3});
  auto real = decodeAction(llvm::json::Value(2.5));
  ASSERT_TRUE(real.ok());
  EXPECT_FALSE(real->allIntegral);
  EXPECT_EQ(real->values, std::vector<double>{2.5});
  auto array = decodeAction(llvm::json::Array{1, 2});
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(array->integers.size(), 2u);
  EXPECT_THAT(decodeAction(llvm::json::Value("x")).error().message(),
              HasSubstr("action must be a number"));
  EXPECT_THAT(decodeAction(llvm::json::Array{}).error().message(), HasSubstr("empty"));
  EXPECT_FALSE(decodeAction(llvm::json::Array{llvm::json::Array{1}}).ok());
}

} // namespace
} // namespace mlgo::protocol
