//===- launch/stale_test_util.h - recorded streams and tables for tests -*- C++ -*-===//
///
/// \file
/// Test helpers of the stale route's tests: a recorded clang stream
/// (tests/data/streams/) whose observations a test edits and writes back,
/// its identity as the record step computes it, and a tuning directory
/// written as `python -m mlgo_env.tune` writes one (docs/tuning-format.md).
/// Failures are gtest failures. Single-threaded.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_STALE_TEST_UTIL_H
#define MLGO_LAUNCH_STALE_TEST_UTIL_H

#include "mlgo/launch/tuned_launch.h"
#include "mlgo/protocol/observation_codec.h"
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/protocol/stream_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

inline std::string base64(const void* data, size_t size) {
  std::string out;
  protocol::appendBase64(out, {static_cast<const std::byte*>(data), size});
  return out;
}

/// Writes DIR/tuning.json, DIR/modules/<key>.json and, for entries with
/// site keys, DIR/module-index.json (unless `index` is false).
inline void writeTable(const std::filesystem::path& dir, const std::vector<std::string>& features,
                       const CompilerStamp& clang, const std::vector<TableEntryFixture>& entries,
                       bool index = true) {
  std::string names;
  for (const auto& f : features)
    names += (names.empty() ? "\"" : ", \"") + f + "\"";
  writeFile(dir / "tuning.json",
            fmt::format(R"({{"format": "mlgo-env-tuning", "version": 1, "problem": "inlining",
 "features": [{}], "clang": {{"path": "{}", "size": {}, "mtime_ns": {}, "version": "{}"}},
 "modules": {}}})",
                        names, clang.path, clang.size, clang.mtimeNs, clang.version,
                        entries.size()));
  std::map<std::string, std::string> files;
  std::string rows;
  for (const auto& e : entries) {
    std::string sites = e.sites ? fmt::format(R"(, "sites": "{}")",
                                              base64(e.hashes.sites.data(),
                                                     e.hashes.sites.size() * sizeof(uint64_t)))
                                : "";
    std::string& file = files[e.hashes.first.substr(0, 16)];
    file += fmt::format(R"({}{{"module": "{}", "opt": "{}", "decisions": {}, "actions": "{}",
 "first": "{}", "stream": "{}", "default_score": 10, "tuned_score": 9{}}})",
                        file.empty() ? "" : ", ", e.module, e.opt, e.actions.size(),
                        base64(e.actions.data(), e.actions.size()), e.hashes.first,
                        e.hashes.whole, sites);
    if (e.sites)
      rows += fmt::format(R"({}{{"module": "{}", "opt": "{}", "first": "{}"}})",
                          rows.empty() ? "" : ", ", e.module, e.opt, e.hashes.first);
  }
  for (const auto& [key, text] : files)
    writeFile(dir / "modules" / (key + ".json"),
              R"({"format": "mlgo-env-tuning-entries", "version": 1, "entries": [)" + text +
                  "]}");
  std::filesystem::remove(dir / "module-index.json"); // as the writer does with no rows
  if (index && !rows.empty())
    writeFile(dir / "module-index.json",
              R"({"format": "mlgo-env-tuning-index", "version": 1, "modules": [)" + rows + "]}");
}

} // namespace mlgo::launch::testing

#endif // MLGO_LAUNCH_STALE_TEST_UTIL_H
