//===- table/tuning_table_test.cc - reading tuning directories --------------===//
///
/// What the golden tables (table_golden_test.cc) do not show: how the
/// launcher finds an entry (by its first digest; of several, by the object
/// path), what a missing file means, and an entry read on its own.
///
//===----------------------------------------------------------------------===//
#include "mlgo/table/table_writer.h"
#include "mlgo/table/tuning_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <unistd.h>

namespace mlgo::table {
namespace {

namespace fs = std::filesystem;

const std::string kFirst = "0123456789abcdef" + std::string(48, 'a');
const std::string kStream(64, 'b');

TuningEntry named(std::string module, std::vector<uint8_t> actions) {
  TuningEntry e;
  e.module = std::move(module);
  e.actions = std::move(actions);
  e.first = kFirst;
  e.stream = kStream;
  return e;
}

TEST(TuningTableTest, ChoosesTheEntryTheObjectPathNames) {
  // libtool compiles each source twice: .libs/x.o (PIC) and x.o
  std::vector<TuningEntry> twins = {named(".libs/x.o", {1, 0}), named("x.o", {0, 1})};
  EXPECT_EQ(chooseEntry(twins, ".libs/x.o")->module, ".libs/x.o");
  EXPECT_EQ(chooseEntry(twins, "x.o")->module, "x.o");        // matched whole
  EXPECT_EQ(chooseEntry(twins, "/b/src/x.o")->module, "x.o"); // likewise
  EXPECT_FALSE(chooseEntry(twins, "y.o"));                    // nothing tells them apart
  std::vector<TuningEntry> dirs = {named("a/x.o", {1}), named("b/x.o", {0})};
  EXPECT_EQ(chooseEntry(dirs, "build/b/x.o")->module, "b/x.o");
  EXPECT_FALSE(chooseEntry(dirs, "x.o"));
  std::vector<TuningEntry> same = {named("a/x.o", {1}), named("b/x.o", {1})};
  EXPECT_TRUE(chooseEntry(same, "x.o")); // they would answer alike
  EXPECT_FALSE(chooseEntry({}, "x.o"));
}

class TuningTableDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tuning-table-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TuningTableDirTest, LooksEntriesUpByTheirFirstDigest) {
  TuningEntry other = named("b.o", {1});
  other.first = "0123456789abcdef" + std::string(48, 'c'); // the same key file
  ASSERT_TRUE(
      writeTable(dir_, {"inlining", {"a"}, {"/c", 1, 2, "c"}, {named("a.o", {1}), other}}).ok());
  auto table = TuningTable::open(dir_);
  ASSERT_TRUE(table.ok()) << table.error().message();
  auto found = table->lookup(kFirst);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, std::vector<TuningEntry>{named("a.o", {1})});
  found = table->lookup(std::string(64, 'e')); // no such key file: no entry
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->empty());
  found = table->lookup("xyz");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message(), "not a SHA-256 digest: 'xyz'");
}

TEST_F(TuningTableDirTest, AMissingManifestIsAnIoErrorNamingItAndMissingEntriesAreNone) {
  auto table = TuningTable::open(dir_);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().code(), ErrorCode::kIo);
  EXPECT_EQ(table.error().message().rfind(
                "tuning file '" + (dir_ / kManifestFile).string() + "': cannot be read: ", 0),
            0u)
      << table.error().message();
  auto entries = readEntries(dir_); // no modules/ folder
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(entries->empty());
  auto index = readIndex(dir_); // an older table: no index
  ASSERT_TRUE(index.ok());
  EXPECT_TRUE(index->empty());
}

TEST(TuningTableTest, ReadsOneEntryUnderNoKey) {
  auto text = entryText(named("a.o", {1, 0}));
  ASSERT_TRUE(text.ok());
  auto entry = parseEntry(*text, "state.json");
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(*entry, named("a.o", {1, 0}));
  auto refused = parseEntry("{\"module\": ", "DIR/state/a.o.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().rfind("tuning file 'DIR/state/a.o.json': not JSON: ", 0), 0u);
}

} // namespace
} // namespace mlgo::table
