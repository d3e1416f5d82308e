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
const std::string kScoredHeader =
    R"({"features":[{"name":"x","type":"int64_t","port":0,"shape":[1]}],)"
    R"("score":{"name":"r","type":"float","port":0,"shape":[1]}})"
    "\n";

struct Malformed {
  const char* name;
  std::string stream;
  std::string error; // expected substring, including the offset
};

std::vector<Malformed> malformedStreams() {
  const std::string ctx = "{\"context\":\"f\"}\n";
  const std::string obs0 = "{\"observation\":0}\n" + bytesOf({7}) + "\n";
  const size_t body = kSmallHeader.size() + ctx.size(); // offset of first record after ctx
  return {
      {"empty stream", "", "offset 0: empty stream: expected a header line"},
      {"bad header JSON", "{\"features\":[\n", "offset 0: header: invalid JSON"},
      {"header not an object", "[1]\n", "offset 0: header: expected a JSON object"},
      {"header without features", "{\"advice\":1}\n", "missing array field 'features'"},
      {"unknown type",
       R"({"features":[{"name":"x","type":"bfloat16","port":0,"shape":[1]}]})"
       "\n",
       "offset 0: header: feature 0 'x': unknown element type 'bfloat16'"},
      {"bad score spec", R"({"features":[],"score":{"name":"r","shape":[1]}})" "\n",
       "header: 'score' 'r': missing string field 'type'"},
      {"huge observation",
       R"({"features":[{"name":"x","type":"double","port":0,"shape":[1000000000]}]})"
       "\n",
       "over the limit"},
      {"truncated header", kSmallHeader.substr(0, 20), "stream ends inside the header line"},
      {"observation before context", kSmallHeader + obs0,
       fmt::format("offset {}: observation 0 before any context record", kSmallHeader.size())},
      {"missing separator", kSmallHeader + ctx + "{\"observation\":0}\n" + bytesOf({7}) + "X",
       fmt::format("offset {}: expected a newline after the 8 bytes of observation 0 (context "
                   "'f'), found byte 0x58",
                   body + 18 + 8)},
      {"truncated tensor", kSmallHeader + ctx + "{\"observation\":0}\n" + "abc",
       fmt::format("offset {}: stream ends inside observation 0 (context 'f'): expected 8 bytes",
                   body + 18 + 3)},
      {"truncated before separator", kSmallHeader + ctx + "{\"observation\":0}\n" + bytesOf({7}),
       "stream ends inside observation 0"},
      {"ids out of order", kSmallHeader + ctx + obs0 + "{\"observation\":2}\n" + bytesOf({1}) + "\n",
       fmt::format("offset {}: observation id out of order in context 'f': expected 1, found 2",
                   body + obs0.size())},
      {"negative id", kSmallHeader + ctx + "{\"observation\":-1}\n", "expected 0, found -1"},
      {"outcome without score", kSmallHeader + ctx + obs0 + "{\"outcome\":0}\n",
       "outcome 0 in a stream whose header has no 'score'"},
      {"outcome id mismatch",
       kScoredHeader + ctx + "{\"observation\":0}\n" + bytesOf({7}) + "\n{\"outcome\":3}\n",
       "outcome id mismatch in context 'f': expected 0 (the preceding observation), found 3"},
      {"outcome without observation", kScoredHeader + ctx + "{\"outcome\":0}\n",
       "outcome 0 does not follow an observation"},
      {"truncated outcome",
       kScoredHeader + ctx + "{\"observation\":0}\n" + bytesOf({7}) + "\n{\"outcome\":0}\nab",
       "stream ends inside outcome 0 (context 'f')"},
      {"unknown record", kSmallHeader + "{\"weird\":1}\n",
       fmt::format("offset {}: expected a context, observation or outcome record, found "
                   "'{{\"weird\":1}}'",
                   kSmallHeader.size())},
      {"garbage record", kSmallHeader + "\x01\x02garbage\n",
       "expected a context, observation or outcome record, found '..garbage' (invalid JSON"},
      {"context not a string", kSmallHeader + "{\"context\":5}\n",
       "expected a context, observation or outcome record"},
      {"truncated record line", kSmallHeader + "{\"contex", "stream ends inside a record line"},
  };
}

TEST(StreamReader, MalformedStreamsGiveTheirErrorInEveryChunking) {
  for (const auto& c : malformedStreams()) {
    SCOPED_TRACE(c.name);
    auto whole = readWhole(c.stream);
    ASSERT_TRUE(whole.error) << "no error for " << c.name;
    EXPECT_THAT(*whole.error, HasSubstr(c.error));
    auto bytewise = readByteByByte(c.stream);
    ASSERT_TRUE(bytewise.error);
    EXPECT_EQ(*bytewise.error, *whole.error);
    auto chunked = readRandomChunks(c.stream, 7, 16);
    ASSERT_TRUE(chunked.error);
    EXPECT_EQ(*chunked.error, *whole.error);
  }
}

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
