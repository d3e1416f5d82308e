//===- protocol/stream_reader_golden_test.cc - the golden logs ------------===//
//
// The C++ reader against tests/data/traces/golden.json (its README says what
// the golden logs hold); the Python twin, python/mlgo_env/trace_log.py, reads
// the same files against the same expectations (python/tests/test_trace_log.py).
//
#include "mlgo/protocol/stream_reader.h"

#include "support/log_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/SHA256.h>

#include <fstream>
#include <sstream>

namespace mlgo::protocol {
namespace {

using mlgo::testing::OwnedEvent;
using ::testing::HasSubstr;

const std::string kGoldenDir = std::string(MLGO_SOURCE_DIR) + "/tests/data/traces/";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const llvm::json::Object& golden() {
  static const llvm::json::Value value = [] {
    auto parsed = llvm::json::parse(readFile(kGoldenDir + "golden.json"));
    EXPECT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    return parsed ? std::move(*parsed) : llvm::json::Value(llvm::json::Object());
  }();
  return *value.getAsObject();
}

/// [name, type, shape] of a spec (null for none), as golden.json writes it.
llvm::json::Value specValue(const std::optional<TensorSpec>& spec) {
  if (!spec)
    return nullptr;
  llvm::json::Array shape;
  for (int64_t d : spec->shape())
    shape.push_back(d);
  return llvm::json::Array{spec->name(), std::string(spelling(spec->type())), std::move(shape)};
}

std::string text(const llvm::json::Value& value) { return llvm::formatv("{0}", value).str(); }

/// [kind, offset, context, id, digest] of an event, as golden.json writes it.
llvm::json::Value recordValue(const OwnedEvent& e) {
  static const char* kKinds[] = {"header", "context", "observation", "outcome"};
  if (e.kind == EventKind::kContext) // The event's id is left from the record before.
    return llvm::json::Array{"context", static_cast<int64_t>(e.offset), e.context, 0, ""};
  auto hash = llvm::SHA256::hash(llvm::arrayRefFromStringRef(e.data));
  return llvm::json::Array{kKinds[static_cast<int>(e.kind)], static_cast<int64_t>(e.offset),
                           e.context, e.id, llvm::toHex(hash, /*LowerCase=*/true).substr(0, 16)};
}

TEST(StreamReaderGolden, ReadsEveryGoldenLogAsRecordedInEveryChunking) {
  const auto* logs = golden().getObject("logs");
  ASSERT_TRUE(logs && logs->size() >= 6);
  for (const auto& [name, expected] : *logs) {
    SCOPED_TRACE(name.str());
    std::string stream = readFile(kGoldenDir + name.str());
    auto whole = mlgo::testing::readWhole(stream);
    ASSERT_FALSE(whole.error) << *whole.error;
    const auto& want = *expected.getAsObject();
    llvm::json::Array features;
    for (const auto& spec : whole.header.features)
      features.push_back(specValue(spec));
    EXPECT_EQ(text(std::move(features)), text(*want.get("features")));
    EXPECT_EQ(text(specValue(whole.header.score)), text(*want.get("score")));
    EXPECT_EQ(text(specValue(whole.header.advice)), text(*want.get("advice")));
    std::vector<std::string> records, wanted;
    for (const auto& e : whole.events)
      if (e.kind != EventKind::kHeader)
        records.push_back(text(recordValue(e)));
    for (const auto& record : *want.getArray("records"))
      wanted.push_back(text(record));
    EXPECT_EQ(records, wanted);
    for (uint32_t seed = 1; seed <= 5; ++seed)
      EXPECT_EQ(mlgo::testing::readRandomChunks(stream, seed, 64 * seed).events, whole.events);
  }
}

TEST(StreamReaderGolden, RefusesEveryMalformedLogWithItsErrorInEveryChunking) {
  const auto* malformed = golden().getObject("malformed");
  ASSERT_TRUE(malformed && malformed->size() >= 20);
  for (const auto& [name, error] : *malformed) {
    SCOPED_TRACE(name.str());
    std::string stream = readFile(kGoldenDir + name.str());
    auto whole = mlgo::testing::readWhole(stream);
    ASSERT_TRUE(whole.error) << "no error";
    EXPECT_THAT(*whole.error, HasSubstr(error.getAsString()->str()));
    auto bytewise = mlgo::testing::readByteByByte(stream);
    ASSERT_TRUE(bytewise.error);
    EXPECT_EQ(*bytewise.error, *whole.error);
    auto chunked = mlgo::testing::readRandomChunks(stream, 7, 16);
    ASSERT_TRUE(chunked.error);
    EXPECT_EQ(*chunked.error, *whole.error);
  }
}

} // namespace
} // namespace mlgo::protocol
