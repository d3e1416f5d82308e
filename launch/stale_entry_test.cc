//===- launch/stale_entry_test.cc - site keys and the stale route's lookups -===//
#include "stale_entry.h"
#include "stale_test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

namespace mlgo::launch {
namespace {

using testing::Hashes;
using testing::Stream;

const std::filesystem::path kStreams = std::filesystem::path(MLGO_SOURCE_DIR) / "tests/data/streams";

std::string hex(uint64_t key) {
  std::string out;
  auto* bytes = reinterpret_cast<const unsigned char*>(&key);
  for (size_t i = 0; i < sizeof key; ++i)
    out += fmt::format("{:02x}", bytes[i]);
  return out;
}

class ScratchDir : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "stale-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST(SiteKeyTest, MatchesTheGoldenKeysAndIgnoresOnlyModuleWideFeatures) {
  // The same keys python/mlgo_env/tuning/identity.py computes (python/tests/test_tuning_table.py
  // checks the same file): the first 8 bytes of SHA-256, in stream order, as hex.
  Stream stream = testing::loadStream(kStreams / "inlining.stream");
  ASSERT_EQ(stream.observations.size(), 11u);
  Hashes hashes = testing::hashesOf(stream);
  std::string keys;
  for (uint64_t key : hashes.sites)
    keys += hex(key) + "\n";
  EXPECT_EQ(keys, testing::readFile(kStreams / "inlining.sites"));
  Stream edited = stream;
  for (size_t i = 0; i < edited.observations.size(); ++i) {
    edited.set(i, "node_count", edited.get(i, "node_count") + 7);
    edited.set(i, "edge_count", edited.get(i, "edge_count") + 3);
  }
  edited.set(4, "callee_users", edited.get(4, "callee_users") + 1);
  Hashes after = testing::hashesOf(edited);
  EXPECT_NE(after.first, hashes.first);
  for (size_t i = 0; i < hashes.sites.size(); ++i)
    EXPECT_EQ(after.sites[i] == hashes.sites[i], i != 4) << i;
}

TEST(StaleAnswersTest, TheKthDecisionOfAKeyGetsTheKthRecordedAction) {
  TuningEntry entry;
  entry.module = "a.o";
  entry.actions = {1, 0, 1, 1, 0};
  entry.sites = {7, 8, 7, 9, 7}; // key 7 recorded three times: actions 1, 1, 0
  StaleAnswers stale(entry);
  EXPECT_EQ(stale.next(9), std::optional<uint8_t>(1));
  EXPECT_EQ(stale.next(7), std::optional<uint8_t>(1));
  EXPECT_EQ(stale.next(5), std::nullopt); // a new site
  EXPECT_EQ(stale.next(7), std::optional<uint8_t>(1));
  EXPECT_EQ(stale.next(9), std::nullopt); // past its recorded occurrences
  EXPECT_EQ(stale.next(7), std::optional<uint8_t>(0));
  EXPECT_EQ(stale.next(7), std::nullopt);
  EXPECT_EQ(stale.decisions(), 7u);
  EXPECT_EQ(stale.fromEntry(), 4u);
  stale.refused();
  EXPECT_EQ(stale.fromEntry(), 3u);
  // After a matching prefix: its keys count as asked.
  StaleAnswers resumed(entry);
  resumed.skip(3);
  EXPECT_EQ(resumed.next(7), std::optional<uint8_t>(0));
  EXPECT_EQ(resumed.next(8), std::nullopt);
  EXPECT_EQ(resumed.decisions(), 5u);
  EXPECT_EQ(resumed.fromEntry(), 4u);
}

TEST(StaleAnswersTest, TheObjectOfACompileWithoutDashO) {
  EXPECT_EQ(objectPathOf("build/x.o", "src/x.c"), "build/x.o");
  EXPECT_EQ(objectPathOf("", "src/lib/x.c"), "x.o");
  EXPECT_EQ(objectPathOf("", "x.cc"), "x.o");
  // a ThinLTO backend job: its input object names the module, not lld's output
  EXPECT_EQ(objectPathOf("x.1.7279.native.o", ".libs/x.o"), ".libs/x.o");
}

using FindStaleEntryTest = ScratchDir;

TEST_F(FindStaleEntryTest, ByTheObjectPathAtTheSameLevelAndProfile) {
  Stream stream = testing::loadStream(kStreams / "inlining.stream");
  Hashes a = testing::hashesOf(stream);
  stream.set(0, "callee_users", 99); // other first decisions: other key files
  Hashes b = testing::hashesOf(stream);
  stream.set(0, "callee_users", 98);
  Hashes c = testing::hashesOf(stream);
  std::vector<uint8_t> actions(11, 1);
  testing::writeTable(dir_, stream.features(), CompilerStamp{"/cc", 1, 2, "cc"},
                      {{"lib/x.o", actions, a}, {"lib/.libs/x.o", actions, b},
                       {"tools/x.o", actions, c, "-O2"}, {"y.o", actions, c, "-Oz", false}});
  auto table = TuningTable::open(dir_);
  ASSERT_TRUE(table.ok());
  auto module = [&](std::string_view object, std::string_view opt) {
    auto found = findStaleEntry(*table, object, opt, "");
    EXPECT_TRUE(found.ok()) << found.error().message();
    return found->entry ? found->entry->module : "none: " + found->why;
  };
  EXPECT_EQ(module("lib/x.o", "-Oz"), "lib/x.o");
  EXPECT_EQ(module("/b/build/lib/x.o", "-Oz"), "lib/x.o"); // the most trailing components
  EXPECT_EQ(module("/b/lib/.libs/x.o", "-Oz"), "lib/.libs/x.o");
  EXPECT_EQ(module("tools/x.o", "-O2"), "tools/x.o");
  EXPECT_EQ(module("tools/x.o", "-O1"), "none: no module tuned at -O1 is named like 'tools/x.o'");
  EXPECT_EQ(module("z.o", "-Oz"), "none: no module tuned at -Oz is named like 'z.o'");
  EXPECT_EQ(module("y.o", "-Oz"), "none: module 'y.o' has no site keys"); // indexed, all are
  EXPECT_EQ(module("other/x.o", "-Oz"),
            "none: 2 modules tuned at -Oz are named like 'other/x.o' and the path does not "
            "tell them apart");
  auto profiled = findStaleEntry(*table, "lib/x.o", "-Oz", std::string(64, 'e'));
  ASSERT_TRUE(profiled.ok());
  EXPECT_EQ(profiled->why, "module 'lib/x.o' was tuned with another profile");
}

TEST_F(FindStaleEntryTest, AnOlderTableHasNoneAndABrokenIndexFailsNamingIt) {
  Stream stream = testing::loadStream(kStreams / "inlining.stream");
  Hashes hashes = testing::hashesOf(stream);
  testing::writeTable(dir_, stream.features(), CompilerStamp{"/cc", 1, 2, "cc"},
                      {{"x.o", std::vector<uint8_t>(11, 0), hashes, "-Oz", false}});
  auto table = TuningTable::open(dir_);
  ASSERT_TRUE(table.ok());
  auto found = findStaleEntry(*table, "x.o", "-Oz", "");
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->entry);
  EXPECT_EQ(found->why, "the table has no site keys (tune again to record them)");
  std::filesystem::path index = dir_ / "module-index.json";
  testing::writeFile(index, R"({"format": "mlgo-env-tuning-index", "version": 1, "modu)");
  found = findStaleEntry(*table, "x.o", "-Oz", "");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(found.error().message().find("tuning file '" + index.string() + "': not JSON"),
            std::string::npos)
      << found.error().message();
  testing::writeFile(index, R"({"format": "mlgo-env-tuning-index", "version": 1, "modules": )"
                            R"([{"module": "x.o", "opt": "-Oz", "first": ")" +
                                hashes.first + "\"}]}");
  found = findStaleEntry(*table, "x.o", "-Oz", "");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->why, "module 'x.o' has no site keys");
  testing::writeFile(index, R"({"format": "mlgo-env-tuning-index", "version": 1, "modules": )"
                            R"([{"module": "gone.o", "opt": "-Oz", "first": ")" +
                                hashes.first + "\"}]}");
  found = findStaleEntry(*table, "gone.o", "-Oz", "");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().message().find("lists module 'gone.o', whose entry is not in the table"),
            std::string::npos);
}

} // namespace
} // namespace mlgo::launch
