//===- table/table_writer_test.cc - writing tuning tables -------------------===//
#include "mlgo/table/table_writer.h"

#include "json_writing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

namespace mlgo::table {
namespace {

namespace fs = std::filesystem;

std::string digest(char c) {
  return std::string(64, c);
}

TuningEntry entry(std::string module, char first, std::vector<uint64_t> sites = {}) {
  TuningEntry e;
  e.module = std::move(module);
  e.opt = "-Oz";
  e.actions = {1, 0, 1};
  e.first = digest(first);
  e.stream = digest('b');
  e.defaultScore = 120;
  e.tunedScore = 96.5;
  e.sites = std::move(sites);
  return e;
}

TableContents contents(std::vector<TuningEntry> entries) {
  return {"inlining", {"a", "b"}, {"/c", 1, 2, "clang 22"}, std::move(entries)};
}

class TableWriterTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "table-writer-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = fs::path(pattern) / "table";
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }
  fs::path dir_;
};

TEST_F(TableWriterTest, WritesWhatTheReaderReadsBackAndRemovesWhatNoEntryNeeds) {
  std::vector<TuningEntry> entries = {entry("b.o", 'c', {7, 8, 9}), entry("a.o", 'c'),
                                      entry("d.o", 'd')};
  auto written = writeTable(dir_, contents(entries));
  ASSERT_TRUE(written.ok()) << written.error().message();
  EXPECT_EQ(*written, 3u);
  auto table = TuningTable::open(dir_);
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_EQ(table->manifest().features, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*table->manifest().profiles, std::vector<std::string>{""});
  auto read = readEntries(dir_);
  ASSERT_TRUE(read.ok()) << read.error().message();
  // One file per key, each sorted by module.
  EXPECT_EQ(*read, (std::vector<TuningEntry>{entries[1], entries[0], entries[2]}));
  auto index = readIndex(dir_);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 3u); // one entry has site keys: every entry, by module
  EXPECT_EQ(index->front().module, "a.o");
  EXPECT_EQ(index->back().module, "d.o");

  ASSERT_TRUE(writeTable(dir_, contents({entries[2]})).ok());
  EXPECT_FALSE(fs::exists(dir_ / "modules" / (entryKey(digest('c')) + ".json")));
  EXPECT_FALSE(fs::exists(dir_ / kIndexFile)); // no entry has site keys
  read = readEntries(dir_);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, std::vector<TuningEntry>{entries[2]});
}

TEST_F(TableWriterTest, RefusesWhatTheReaderWouldRefuseAndWritesNothing) {
  struct Case {
    TableContents contents;
    std::string message;
  } cases[] = {
      {{"vectorize", {"a"}, {}, {}}, "no tuning table for problem 'vectorize'"},
      {{"regalloc", {"b", "a"}, {}, {}}, "'features' must be a non-empty list of names, sorted"},
      {{"regalloc", {}, {}, {}}, "'features' must be a non-empty list of names, sorted"},
      {contents({entry("a.o", 'X')}), "entry 'a.o': first and stream must be SHA-256 in hex"},
      {contents({entry("a.o", 'c', {1, 2})}), "entry 'a.o': 2 site keys for 3 decisions"},
      {contents({entry("\xff.o", 'c')}), "is not UTF-8 text"},
  };
  for (auto& c : cases) {
    auto written = writeTable(dir_, std::move(c.contents));
    ASSERT_FALSE(written.ok()) << c.message;
    EXPECT_EQ(written.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(written.error().message().find(c.message), std::string::npos)
        << written.error().message();
    EXPECT_FALSE(fs::exists(dir_)) << c.message;
  }
  TuningEntry e = entry("a.o", 'c');
  e.profile = "xyz";
  EXPECT_EQ(entryText(e).error().message(),
            "entry 'a.o': profile must be \"\" or a SHA-256 in hex");
  e = entry("a.o", 'c');
  e.tunedScore = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(entryText(e).error().message(), "entry 'a.o': a score is not a finite number");
  e = entry("a.o", 'c');
  e.priorities = EntryPriorities{3, {{"f", {{2, -1.0}}}}};
  EXPECT_EQ(entryText(e).error().message(),
            "entry 'a.o': priorities: function 'f': step 2: the multiplier must be a finite "
            "number >= 0");
  e.priorities = EntryPriorities{3, {{"\xff", {}}}};
  EXPECT_NE(entryText(e).error().message().find("is not UTF-8 text"), std::string::npos);
}

TEST_F(TableWriterTest, AnEntryWithPrioritiesIsIndexedAndReadsBack) {
  TuningEntry plain = entry("a.o", 'c');
  TuningEntry joint = entry("sub/b.o", 'd');
  joint.priorities = EntryPriorities{5, {{"main", {{0, 16.0}, {12, 0.0625}}}, {"f", {}}}};
  ASSERT_TRUE(writeTable(dir_, contents({plain, joint})).ok());
  auto read = readEntries(dir_);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(*read, (std::vector<TuningEntry>{plain, joint}));
  auto index = readIndex(dir_);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 2u); // the launcher finds it before the compile, among all
  EXPECT_EQ(index->back().module, "sub/b.o");
  auto text = entryText(joint);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find(", \"priorities\": {\"questions\": 5, \"functions\": {\"f\": {}, "
                       "\"main\": {\"0\": 16.0, \"12\": 0.0625}}}}"),
            std::string::npos)
      << *text;
}

TEST_F(TableWriterTest, AFileThatCannotBeWrittenIsAnIoErrorNamingIt) {
  fs::create_directories(dir_ / "modules" / (entryKey(digest('c')) + ".json")); // a folder
  auto written = writeTable(dir_, contents({entry("a.o", 'c')}));
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code(), ErrorCode::kIo);
  EXPECT_NE(written.error().message().find(entryKey(digest('c')) + ".json"), std::string::npos)
      << written.error().message();
}

TEST(TableJsonTest, EntriesAreWrittenAsTheFileHoldsThem) {
  auto text = entryText(entry("a.o", 'c', {0x0102030405060708u, 0, 0}));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "{\"module\": \"a.o\", \"opt\": \"-Oz\", \"decisions\": 3, \"actions\": \"AQAB\", "
            "\"first\": \"" +
                digest('c') + "\", \"stream\": \"" + digest('b') +
                "\", \"default_score\": 120.0, \"tuned_score\": 96.5, \"profile\": \"\", "
                "\"sites\": \"CAcGBQQDAgEAAAAAAAAAAAAAAAAAAAAA\"}");
}

TEST(TableJsonTest, FloatsReadAsPythonWritesThem) {
  struct Case {
    double value;
    const char* text;
  } cases[] = {{96.0, "96.0"},
               {0.1, "0.1"},
               {1e-05, "1e-05"},
               {0.0001, "0.0001"},
               {1e16, "1e+16"},
               {1234567890123456.0, "1234567890123456.0"},
               {-0.0, "-0.0"},
               {0.0, "0.0"},
               {-2.5, "-2.5"},
               {5e-324, "5e-324"},
               {1.5e300, "1.5e+300"},
               {123.456, "123.456"},
               {1e15, "1000000000000000.0"}};
  for (const auto& c : cases)
    EXPECT_EQ(floatText(c.value), c.text);
}

TEST(TableJsonTest, StringsAreQuotedAsciiOnly) {
  std::string out;
  ASSERT_TRUE(appendQuoted(out, "a\"b\\c\n\t\x01\x7f\xc3\xa9\xf0\x9f\x98\x80"));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\\u00e9\\ud83d\\ude00\"");
  out.clear();
  EXPECT_FALSE(appendQuoted(out, "\xc3"));
  EXPECT_EQ(out, "");
}

} // namespace
} // namespace mlgo::table
