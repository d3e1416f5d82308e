//===- env/recorded_streams_clang_test.cc - the fake still speaks clang-22 -===//
//
// The unit tests' fake driver replays streams recorded from clang-22
// (tests/data/streams/). Each recorded header must still be the one today's
// clang-22 sends for its problem, or the fake tests a protocol clang no
// longer speaks. Real clang-22.
//
#include "mlgo/env/clang_probe.h"

#include "testing/fake_driver.h"

#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

TEST(RecordedStreams, HeadersAreWhatClang22SendsToday) {
  const std::pair<const char*, const char*> recorded[] = {
      {"inlining", "inlining.stream"}, {"regalloc-priority", "regalloc-priority.stream"}};
  support::CleanupScope scope; // Outlives what is registered in it.
  for (const auto& [name, file] : recorded) {
    auto problem = findProblem(name);
    ASSERT_TRUE(problem.ok()) << name;
    auto live = probeProblem(scope, MLGO_CLANG, **problem, {});
    ASSERT_TRUE(live.ok()) << live.error().message();
    auto stream = testing::loadRecordedStream(file);
    ASSERT_TRUE(stream.ok()) << stream.error().message();
    testing::FakeDriverOptions options;
    options.probeStream = *stream;
    testing::FakeDriver fake(options);
    auto replayed = fake.probe(scope, MLGO_CLANG, **problem, {}, std::chrono::seconds(1), {});
    ASSERT_TRUE(replayed.ok()) << replayed.error().message();
    EXPECT_EQ(replayed->header, live->header)
        << file << " was recorded from another clang: record it again (see its README)\n"
        << replayed->header.toJson() << "\n"
        << live->header.toJson();
    EXPECT_GT(replayed->observations, 0u) << file;
  }
}

} // namespace
} // namespace mlgo::env
