//===- table/tuning_table_test.cc - reading tuning files -------------------===//
#include "mlgo/table/tuning_table.h"

#include <gtest/gtest.h>

#include <string>

namespace mlgo::table {
namespace {

const std::string kFirst = "0123456789abcdef" + std::string(48, 'a');
const std::string kStream(64, 'b');

std::string entries(const std::string& entry) {
  return R"({"format": "mlgo-env-tuning-entries", "version": 1, "entries": [)" + entry + "]}";
}

std::string entry(const std::string& actions = "AQAB", int decisions = 3,
                  const std::string& first = kFirst) {
  return R"({"module": "src/a.o", "opt": "-Oz", "decisions": )" + std::to_string(decisions) +
         R"(, "actions": ")" + actions + R"(", "first": ")" + first + R"(", "stream": ")" +
         kStream + R"(", "default_score": 120, "tuned_score": 96})";
}

TEST(TuningTableTest, ReadsEntries) {
  auto read = parseEntries(entries(entry()), "0123456789abcdef", "f.json");
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_EQ(read->size(), 1u);
  const TuningEntry& e = read->front();
  EXPECT_EQ(e.module, "src/a.o");
  EXPECT_EQ(e.opt, "-Oz");
  EXPECT_EQ(e.actions, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(e.first, kFirst);
  EXPECT_EQ(e.tunedScore, 96);
}

TEST(TuningTableTest, RefusesWhatDoesNotHoldTogetherNamingTheFile) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {entries(entry()).substr(0, 60), "not JSON"},
      {R"({"format": "other", "version": 1, "entries": []})", "format is not"},
      {R"({"format": "mlgo-env-tuning-entries", "version": 2, "entries": []})", "version 2"},
      {entries(entry("AQAB", 4)), "says 4 decisions but holds 3"},
      {entries(entry("A!AB")), "actions"},
      {entries(entry("AQAB", 3, "xyz")), "SHA-256"},
      {entries(entry("AQAB", 3, std::string(64, 'c'))), "filed under another key"},
      {entries(R"({"module": "a.o"})"), "lacks one of"},
  };
  for (const auto& c : cases) {
    auto read = parseEntries(c.text, "0123456789abcdef", "DIR/modules/k.json");
    ASSERT_FALSE(read.ok()) << c.text;
    EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument) << read.error().message();
    EXPECT_NE(read.error().message().find("tuning file 'DIR/modules/k.json': "),
              std::string::npos)
        << read.error().message();
    EXPECT_NE(read.error().message().find(c.message), std::string::npos)
        << read.error().message();
  }
}

TuningEntry named(std::string module, std::vector<uint8_t> actions) {
  TuningEntry e;
  e.module = std::move(module);
  e.actions = std::move(actions);
  e.stream = kStream;
  return e;
}

TEST(TuningTableTest, ChoosesTheEntryTheObjectPathNames) {
  // libtool compiles each source twice: .libs/x.o (PIC) and x.o
  std::vector<TuningEntry> twins = {named(".libs/x.o", {1, 0}), named("x.o", {0, 1})};
  EXPECT_EQ(chooseEntry(twins, ".libs/x.o")->module, ".libs/x.o");
  EXPECT_EQ(chooseEntry(twins, "x.o")->module, "x.o");       // matched whole
  EXPECT_EQ(chooseEntry(twins, "/b/src/x.o")->module, "x.o"); // likewise
  EXPECT_FALSE(chooseEntry(twins, "y.o"));                    // nothing tells them apart
  std::vector<TuningEntry> dirs = {named("a/x.o", {1}), named("b/x.o", {0})};
  EXPECT_EQ(chooseEntry(dirs, "build/b/x.o")->module, "b/x.o");
  EXPECT_FALSE(chooseEntry(dirs, "x.o"));
  std::vector<TuningEntry> same = {named("a/x.o", {1}), named("b/x.o", {1})};
  EXPECT_TRUE(chooseEntry(same, "x.o")); // they would answer alike
  EXPECT_FALSE(chooseEntry({}, "x.o"));
}

TEST(TuningTableTest, ReadsAndChecksTheManifest) {
  std::string good = R"({"format": "mlgo-env-tuning", "version": 1, "problem": "regalloc",
    "features": ["a", "b"], "clang": {"path": "/c", "size": 1, "mtime_ns": 2,
    "version": "clang 22"}, "modules": 3})";
  auto read = parseManifest(good, "tuning.json");
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->problem, "regalloc");
  EXPECT_EQ(read->compiler.version, "clang 22");
  std::string unsorted = good;
  unsorted.replace(unsorted.find(R"(["a", "b"])"), 10, R"(["b", "a"])");
  auto refused = parseManifest(unsorted, "DIR/tuning.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "tuning file 'DIR/tuning.json': 'features' must be sorted and distinct");
  std::string unknown = good;
  unknown.replace(unknown.find("regalloc"), 8, "vectorize");
  refused = parseManifest(unknown, "DIR/tuning.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "tuning file 'DIR/tuning.json': 'problem' must be \"inlining\" or \"regalloc\"");
}

std::string entryWith(const std::string& profileField) {
  return R"({"format": "mlgo-env-tuning-entries", "version": 1, "entries": [)"
         R"({"module": "a.o", "opt": "-O2", "decisions": 1, "actions": "AQ==", "first": ")" +
         kFirst + R"(", "stream": ")" + std::string(64, 'b') +
         R"(", "default_score": 2, "tuned_score": 1)" + profileField + "}]}";
}

TEST(TuningTableProfileTest, EntriesCarryTheProfileTheyWereTunedWith) {
  auto absent = parseEntries(entryWith(""), "0123456789abcdef", "k.json");
  ASSERT_TRUE(absent.ok()) << absent.error().message();
  EXPECT_EQ(absent->front().profile, ""); // older tables: no profile
  std::string digest(64, 'c');
  auto with = parseEntries(entryWith(R"(, "profile": ")" + digest + "\""), "0123456789abcdef",
                           "k.json");
  ASSERT_TRUE(with.ok()) << with.error().message();
  EXPECT_EQ(with->front().profile, digest);
  for (const std::string& bad : std::vector<std::string>{
           R"(, "profile": "xyz")", R"(, "profile": 3)",
           R"(, "profile": ")" + std::string(64, 'C') + "\""}) {
    auto refused = parseEntries(entryWith(bad), "0123456789abcdef", "DIR/k.json");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().message(),
              "tuning file 'DIR/k.json': entry 'a.o': profile must be \"\" or a SHA-256 in hex");
  }
}

std::string manifestWith(const std::string& profilesField) {
  return R"({"format": "mlgo-env-tuning", "version": 1, "problem": "regalloc",
    "features": ["a"], "clang": {"path": "/c", "size": 1, "mtime_ns": 2,
    "version": "clang 22"}, "modules": 1)" +
         profilesField + "}";
}

TEST(TuningTableProfileTest, TheManifestListsTheEntriesProfiles) {
  auto older = parseManifest(manifestWith(""), "tuning.json");
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_FALSE(older->profiles.has_value()); // unknown: the entries tell
  std::string c(64, 'c'), d(64, 'd');
  auto listed =
      parseManifest(manifestWith(R"(, "profiles": ["", ")" + c + R"(", ")" + d + "\"]"), "t");
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(*listed->profiles, (std::vector<std::string>{"", c, d}));
  struct Case {
    std::string field, message;
  } cases[] = {
      {R"(, "profiles": "")", "'profiles' must be a list"},
      {R"(, "profiles": ["x"])", "'profiles' must hold \"\" or SHA-256 digests in hex"},
      {R"(, "profiles": [")" + d + R"(", ")" + c + "\"]", "'profiles' must be sorted and distinct"},
      {R"(, "profiles": [")" + c + R"(", ")" + c + "\"]", "'profiles' must be sorted and distinct"},
  };
  for (const auto& k : cases) {
    auto refused = parseManifest(manifestWith(k.field), "DIR/tuning.json");
    ASSERT_FALSE(refused.ok()) << k.field;
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(refused.error().message(), "tuning file 'DIR/tuning.json': " + k.message);
  }
}

} // namespace
} // namespace mlgo::table
