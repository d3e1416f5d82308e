//===- protocol/stream_reader_test.cc -------------------------------------===//
#include "mlgo/protocol/stream_reader.h"

#include "support/log_events.h"
#include "support/synthetic_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::protocol {
namespace {

using mlgo::testing::OwnedEvent;
using mlgo::testing::readByteByByte;
using mlgo::testing::readRandomChunks;
using mlgo::testing::readWhole;
using ::testing::HasSubstr;

std::string bytesOf(std::initializer_list<int64_t> values) {
  std::string out;
  for (int64_t v : values)
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

TEST(StreamReader, ParsesRegallocShapedStream) {
  auto header = mlgo::testing::regallocHeader();
  ASSERT_EQ(header.observationBytes(), 3436u);
  std::string stream = mlgo::testing::syntheticStream(header, 5, 4);
  auto read = readWhole(stream);
  ASSERT_FALSE(read.error) << *read.error;
  EXPECT_EQ(read.header, header);
  int contexts = 0, observations = 0;
  for (const auto& e : read.events) {
    if (e.kind == EventKind::kContext)
      ++contexts;
    if (e.kind != EventKind::kObservation)
      continue;
    ++observations;
    ASSERT_EQ(e.tensors.size(), 21u);
    EXPECT_EQ(e.data.size(), 3436u);
    size_t at = 0;
    for (size_t i = 0; i < e.tensors.size(); ++i) {
      EXPECT_EQ(e.tensors[i], e.data.substr(at, header.features[i].byteSize()));
      at += header.features[i].byteSize();
    }
    // Each record starts with its JSON line.
    EXPECT_EQ(stream.compare(e.offset, 15, "{\"observation\":"), 0);
  }
  EXPECT_EQ(contexts, 5);
  EXPECT_EQ(observations, 3 + 4 + 5 + 3 + 4);
}

TEST(StreamReader, SameEventsWholeByteByByteAndRandomChunks) {
  for (const auto& header : {mlgo::testing::regallocHeader(), mlgo::testing::scoredHeader()}) {
    std::string stream = mlgo::testing::syntheticStream(header, 7, 3, 42);
    auto whole = readWhole(stream);
    ASSERT_FALSE(whole.error) << *whole.error;
    ASSERT_GT(whole.events.size(), 10u);
    auto bytewise = readByteByByte(stream);
    ASSERT_FALSE(bytewise.error) << *bytewise.error;
    EXPECT_EQ(bytewise.events, whole.events);
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      auto chunked = readRandomChunks(stream, seed, seed * 300);
      ASSERT_FALSE(chunked.error) << *chunked.error;
      EXPECT_EQ(chunked.events, whole.events) << "seed " << seed;
    }
  }
}

TEST(StreamReader, OutcomesFollowObservations) {
  auto header = mlgo::testing::scoredHeader();
  std::string stream = mlgo::testing::syntheticStream(header, 2, 2);
  auto read = readWhole(stream);
  ASSERT_FALSE(read.error) << *read.error;
  ASSERT_TRUE(read.header.score);
  for (size_t i = 0; i < read.events.size(); ++i) {
    if (read.events[i].kind != EventKind::kOutcome)
      continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(read.events[i - 1].kind, EventKind::kObservation);
    EXPECT_EQ(read.events[i].id, read.events[i - 1].id);
    EXPECT_EQ(read.events[i].data.size(), 4u);
  }
}

TEST(StreamReader, ContextFollowedByContextOrEnd) {
  std::string stream = R"({"features":[{"name":"x","type":"int64_t","port":0,"shape":[1]}],)"
                       R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})"
                       "\n{\"context\":\"a\"}\n{\"context\":\"b\\n\\\"q\\\"\"}\n"
                       "{\"observation\":0}\n" +
                       bytesOf({10}) + "\n{\"context\":\"empty\"}\n";
  auto read = readByteByByte(stream);
  ASSERT_FALSE(read.error) << *read.error;
  ASSERT_EQ(read.events.size(), 5u);
  EXPECT_EQ(read.events[1].context, "a");
  EXPECT_EQ(read.events[2].context, "b\n\"q\"");
  EXPECT_EQ(read.events[3].kind, EventKind::kObservation);
  EXPECT_EQ(read.events[3].data, bytesOf({10}));
  EXPECT_EQ(read.events[4].context, "empty");
  ASSERT_TRUE(read.header.advice);
  EXPECT_EQ(read.header.advice->name(), "d");
}

TEST(StreamReader, IdsContinueWhenAContextReturnsAndSpacedJsonIsAccepted) {
  std::string h = R"({"features":[{"name":"x","type":"uint8_t","port":0,"shape":[1]}]})"
                  "\n";
  std::string stream = h + "{\"context\":\"f\"}\n{\"observation\":0}\nA\n{\"context\":\"g\"}\n" +
                       "{ \"observation\" : 0 }\nB\n{\"context\":\"f\"}\n{\"observation\":1}\nC\n";
  auto read = readWhole(stream);
  ASSERT_FALSE(read.error) << *read.error;
  ASSERT_EQ(read.events.size(), 7u);
  EXPECT_EQ(read.events[6].id, 1);
  EXPECT_EQ(read.events[6].context, "f");
}

TEST(StreamReader, PrepareCommitFeedsWithoutCopy) {
  std::string stream = mlgo::testing::syntheticStream(mlgo::testing::regallocHeader(), 2, 2);
  StreamReader reader;
  size_t at = 0;
  int observations = 0;
  LogEvent event;
  while (true) {
    if (at == stream.size())
      reader.finish();
    else {
      auto space = reader.prepare(1000);
      size_t n = std::min(space.size(), std::min<size_t>(777, stream.size() - at));
      std::memcpy(space.data(), stream.data() + at, n);
      reader.commit(n);
      at += n;
    }
    auto status = reader.next(event);
    ASSERT_TRUE(status.ok()) << status.error().message();
    while (status.ok() && *status == ReadStatus::kEvent) {
      observations += event.kind == EventKind::kObservation;
      status = reader.next(event);
      ASSERT_TRUE(status.ok());
    }
    if (*status == ReadStatus::kEnd)
      break;
  }
  EXPECT_EQ(observations, 1 + 2);
  EXPECT_EQ(reader.offset(), stream.size());
}

const std::string kSmallHeader =
    R"({"features":[{"name":"x","type":"int64_t","port":0,"shape":[1]}]})"
    "\n";
// Malformed logs and the errors they give: the golden set (stream_reader_golden_test.cc).

TEST(StreamReader, StaysFailedAfterAnError) {
  StreamReader reader;
  reader.feed(std::string_view("not json\n"));
  LogEvent event;
  auto first = reader.next(event);
  ASSERT_FALSE(first.ok());
  reader.feed(kSmallHeader);
  auto second = reader.next(event);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message(), first.error().message());
}

TEST(StreamReader, LineLengthIsBounded) {
  StreamReader::Options options;
  options.maxLineBytes = 100;
  StreamReader reader(options);
  reader.feed(std::string(101, 'a'));
  LogEvent event;
  auto status = reader.next(event);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message(), HasSubstr("offset 0: no newline within 100 bytes"));
}

TEST(StreamReader, NeedsMoreUntilARecordIsWhole) {
  StreamReader reader;
  LogEvent event;
  reader.feed(kSmallHeader.substr(0, 10));
  EXPECT_EQ(*reader.next(event), ReadStatus::kNeedMore);
  reader.feed(kSmallHeader.substr(10));
  EXPECT_EQ(*reader.next(event), ReadStatus::kEvent);
  EXPECT_EQ(event.kind, EventKind::kHeader);
  reader.feed(std::string_view("{\"context\":\"\"}\n{\"observation\":0}\n1234"));
  EXPECT_EQ(*reader.next(event), ReadStatus::kEvent);
  EXPECT_EQ(event.context, "");
  EXPECT_EQ(*reader.next(event), ReadStatus::kNeedMore);
  reader.feed(std::string_view("5678\n"));
  ASSERT_EQ(*reader.next(event), ReadStatus::kEvent);
  EXPECT_EQ(event.kind, EventKind::kObservation);
  EXPECT_EQ(event.tensors.size(), 1u);
  EXPECT_EQ(*reader.next(event), ReadStatus::kNeedMore);
  reader.finish();
  EXPECT_EQ(*reader.next(event), ReadStatus::kEnd);
}

} // namespace
} // namespace mlgo::protocol
