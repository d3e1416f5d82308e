//===- protocol/stream_writer_test.cc -------------------------------------===//
#include "mlgo/protocol/stream_writer.h"

#include "support/log_events.h"
#include "support/synthetic_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::protocol {
namespace {

using ::testing::HasSubstr;

TEST(StreamWriter, WritesLlvmsExactBytes) {
  LogHeader header;
  header.features.push_back(*TensorSpec::create("li_size", ElementType::kInt64, {1}));
  header.advice = *TensorSpec::create("priority", ElementType::kFloat, {1});
  StreamWriter writer(header);
  std::string out;
  writer.writeHeader(out);
  writer.writeContext(out, "_Z3fooPKc\t\"x\"\x01");
  int64_t value = 10; // 0x0a inside the tensor
  ASSERT_TRUE(writer.writeObservation(out, std::as_bytes(std::span(&value, 1))).ok());
  std::string expected =
      R"({"features":[{"name":"li_size","type":"int64_t","port":0,"shape":[1]}],)"
      R"("advice":{"name":"priority","type":"float","port":0,"shape":[1]}})"
      "\n"
      R"({"context":"_Z3fooPKc\t\"x\"\u0001"})"
      "\n{\"observation\":0}\n" +
      std::string(reinterpret_cast<const char*>(&value), 8) + "\n";
  EXPECT_EQ(out, expected);
}

TEST(StreamWriter, NumbersObservationsPerContextName) {
  auto header = mlgo::testing::scoredHeader();
  StreamWriter writer(header);
  std::string out, obs(header.observationBytes(), 'x'), score(4, 's');
  auto o = std::as_bytes(std::span(obs.data(), obs.size()));
  auto s = std::as_bytes(std::span(score.data(), score.size()));
  writer.writeContext(out, "a");
  ASSERT_TRUE(writer.writeObservation(out, o).ok());
  ASSERT_TRUE(writer.writeOutcome(out, s).ok());
  ASSERT_TRUE(writer.writeObservation(out, o).ok());
  writer.writeContext(out, "b");
  EXPECT_EQ(writer.nextObservationId(), 0);
  writer.writeContext(out, "a");
  EXPECT_EQ(writer.nextObservationId(), 2);
  EXPECT_THAT(out, HasSubstr("{\"outcome\":0}\nssss\n{\"observation\":1}\n"));
}

TEST(StreamWriter, RejectsWrongSizesAndOrder) {
  auto header = mlgo::testing::scoredHeader();
  StreamWriter writer(header);
  std::string out, obs(header.observationBytes(), 'x');
  auto o = std::as_bytes(std::span(obs.data(), obs.size()));
  EXPECT_THAT(writer.writeObservation(out, o).error().message(), HasSubstr("before any context"));
  writer.writeContext(out, "c");
  out.clear();
  EXPECT_THAT(writer.writeObservation(out, o.first(3)).error().message(),
              HasSubstr("observation has 3 bytes, the header's features need"));
  EXPECT_THAT(writer.writeOutcome(out, o.first(4)).error().message(),
              HasSubstr("without a preceding observation"));
  EXPECT_TRUE(out.empty());
  std::vector<std::span<const std::byte>> tensors = {o.first(16), o.first(12)};
  EXPECT_THAT(writer.writeObservation(out, tensors).error().message(),
              HasSubstr("observation has 2 tensors, the header has 3"));
}

TEST(StreamWriter, RoundTripsThroughTheReader) {
  for (const auto& header : {mlgo::testing::regallocHeader(), mlgo::testing::scoredHeader()}) {
    std::string stream = mlgo::testing::syntheticStream(header, 6, 3, 9);
    auto read = mlgo::testing::readWhole(stream);
    ASSERT_FALSE(read.error) << *read.error;
    auto again = mlgo::testing::rewrite(read.header, read.events);
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, stream);
  }
}

} // namespace
} // namespace mlgo::protocol
