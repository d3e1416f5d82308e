//===- launch/stale_test_util.h - recorded streams and tables for tests -*- C++ -*-===//
///
/// \file
/// Test helpers of the stale route's tests: a recorded clang stream
/// (tests/data/streams/) whose observations a test edits and writes back,
/// its identity as the record step computes it, and a tuning directory
/// written by the one writer (table_writer.h), as `python -m mlgo_env.tune`
/// writes one.
/// Failures are gtest failures. Single-threaded.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_STALE_TEST_UTIL_H
#define MLGO_LAUNCH_STALE_TEST_UTIL_H

#include "mlgo/launch/tuned_launch.h"
#include "mlgo/table/table_writer.h"
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/protocol/stream_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mlgo::launch::testing {

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// A recorded stream of one context: the header and each observation's
/// feature bytes; the features are int64_t of shape [1] (inlining).
struct Stream {
  protocol::LogHeader header;
  std::vector<std::vector<std::byte>> observations;

  size_t offsetOf(std::string_view feature) const {
    size_t offset = 0;
    for (const auto& spec : header.features) {
      if (spec.name() == feature)
        return offset;
      offset += spec.byteSize();
    }
    ADD_FAILURE() << "no feature " << feature;
    return 0;
  }
  int64_t get(size_t i, std::string_view feature) const {
    int64_t value = 0;
    std::memcpy(&value, observations.at(i).data() + offsetOf(feature), sizeof value);
    return value;
  }
  void set(size_t i, std::string_view feature, int64_t value) {
    std::memcpy(observations.at(i).data() + offsetOf(feature), &value, sizeof value);
  }
  /// The feature names, sorted: the table's identity features.
  std::vector<std::string> features() const {
    std::vector<std::string> names;
    for (const auto& spec : header.features)
      names.push_back(spec.name());
    std::sort(names.begin(), names.end());
    return names;
  }
  /// The stream's bytes as clang writes them.
  std::string bytes() const {
    protocol::StreamWriter writer(header);
    std::string out;
    writer.writeHeader(out);
    writer.writeContext(out, "");
    for (const auto& o : observations)
      EXPECT_TRUE(writer.writeObservation(out, o).ok());
    return out;
  }
};

inline Stream loadStream(const std::filesystem::path& path) {
  std::string text = readFile(path);
  protocol::StreamReader reader;
  reader.feed(text);
  reader.finish();
  Stream stream;
  protocol::LogEvent event;
  for (;;) {
    auto status = reader.next(event);
    if (!status.ok() || *status != protocol::ReadStatus::kEvent) {
      EXPECT_TRUE(status.ok()) << path;
      break;
    }
    if (event.kind == protocol::EventKind::kObservation)
      stream.observations.emplace_back(event.data.begin(), event.data.end());
  }
  stream.header = reader.header();
  return stream;
}

/// A stream's identity as the record step computes it.
struct Hashes {
  std::string first, whole;
  std::vector<uint64_t> sites;
};

inline Hashes hashesOf(const Stream& stream) {
  std::vector<std::string> features = stream.features();
  auto identity = StreamIdentity::create(stream.header, features);
  EXPECT_TRUE(identity.ok());
  Hashes hashes;
  for (const auto& o : stream.observations) {
    std::vector<std::span<const std::byte>> views;
    size_t offset = 0;
    for (const auto& spec : stream.header.features) {
      views.emplace_back(o.data() + offset, spec.byteSize());
      offset += spec.byteSize();
    }
    identity->add(views);
    hashes.sites.push_back(identity->siteKey(views));
  }
  hashes.first = identity->first();
  hashes.whole = identity->whole();
  return hashes;
}

struct TableEntryFixture {
  std::string module;
  std::vector<uint8_t> actions;
  Hashes hashes;
  std::string opt = "-Oz";
  bool sites = true; ///< false: as tables older than site keys.
};

/// Writes the table of `entries` (problem inlining) with the one writer
/// (table_writer.h); without the module index when `index` is false.
inline void writeTable(const std::filesystem::path& dir, const std::vector<std::string>& features,
                       const CompilerStamp& clang, const std::vector<TableEntryFixture>& entries,
                       bool index = true) {
  table::TableContents contents{"inlining", features, clang, {}};
  for (const auto& e : entries) {
    TuningEntry entry;
    entry.module = e.module;
    entry.opt = e.opt;
    entry.actions = e.actions;
    entry.first = e.hashes.first;
    entry.stream = e.hashes.whole;
    entry.defaultScore = 10;
    entry.tunedScore = 9;
    if (e.sites)
      entry.sites = e.hashes.sites;
    contents.entries.push_back(std::move(entry));
  }
  auto written = table::writeTable(dir, std::move(contents));
  ASSERT_TRUE(written.ok()) << written.error().message();
  if (!index)
    std::filesystem::remove(dir / table::kIndexFile);
}

} // namespace mlgo::launch::testing

#endif // MLGO_LAUNCH_STALE_TEST_UTIL_H
