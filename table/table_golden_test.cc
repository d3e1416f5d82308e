//===- table/table_golden_test.cc - the golden tuning tables ----------------===//
///
/// Holds the one reader and writer to tests/data/tables/manifest.json, as
/// python/tests/test_tuning_table.py holds the package's wrappers: every
/// valid table reads as listed (manifest, entries, index); a table the
/// writer wrote is what it writes again from what was read, byte for byte;
/// the recorded stream hashes to its entry's first, stream and site keys;
/// every invalid file is refused with `tuning file '<path>': ` and the listed
/// error.
///
//===----------------------------------------------------------------------===//
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/table/stream_identity.h"
#include "mlgo/table/table_writer.h"
#include "mlgo/table/tuning_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace mlgo::table {
namespace {

namespace fs = std::filesystem;
namespace json = llvm::json;
using ::testing::StartsWith;

const fs::path kData = fs::path(MLGO_SOURCE_DIR) / "tests" / "data";
const fs::path kGolden = kData / "tables";

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// manifest.json, parsed once; a test fails (not crashes) when it cannot be.
const json::Object& golden() {
  static const json::Object parsed = [] {
    auto value = json::parse(readFile(kGolden / "manifest.json"));
    if (!value) {
      llvm::consumeError(value.takeError());
      return json::Object{};
    }
    return value->getAsObject() ? std::move(*value->getAsObject()) : json::Object{};
  }();
  return parsed;
}

const json::Array& cases(const char* key) {
  static const json::Array empty;
  const json::Array* list = golden().getArray(key);
  return list != nullptr ? *list : empty;
}

std::string text(const json::Object& o, llvm::StringRef key) {
  return o.getString(key).value_or("").str();
}

std::vector<std::string> strings(const json::Array* list) {
  std::vector<std::string> out;
  for (size_t i = 0; list != nullptr && i < list->size(); ++i)
    out.push_back((*list)[i].getAsString().value_or("").str());
  return out;
}

/// A site key as the manifest writes it: the hex of its 8 bytes in memory order.
std::string siteHex(uint64_t key) {
  unsigned char bytes[8];
  std::memcpy(bytes, &key, sizeof key);
  std::string out;
  for (unsigned char b : bytes)
    out += fmt::format("{:02x}", b);
  return out;
}

/// An entry's priorities as the manifest lists them (null: none).
std::optional<EntryPriorities> prioritiesOf(const json::Object* listed) {
  if (listed == nullptr)
    return std::nullopt;
  EntryPriorities out;
  out.questions = static_cast<uint64_t>(listed->getInteger("questions").value_or(-1));
  for (const auto& [name, steps] : *listed->getObject("functions")) {
    auto& kept = out.multipliers[name.str()];
    for (const auto& [step, multiplier] : *steps.getAsObject())
      kept[std::stoull(step.str())] = multiplier.getAsNumber().value_or(NAN);
  }
  return out;
}

void expectEntry(const TuningEntry& e, const json::Object& want) {
  SCOPED_TRACE(e.module);
  EXPECT_EQ(e.module, text(want, "module"));
  EXPECT_EQ(e.opt, text(want, "opt"));
  std::vector<uint8_t> actions;
  for (const json::Value& a : *want.getArray("actions"))
    actions.push_back(static_cast<uint8_t>(a.getAsInteger().value_or(-1)));
  EXPECT_EQ(e.actions, actions);
  EXPECT_EQ(e.first, text(want, "first"));
  EXPECT_EQ(e.stream, text(want, "stream"));
  EXPECT_EQ(e.defaultScore, want.getNumber("default_score").value_or(NAN));
  EXPECT_EQ(e.tunedScore, want.getNumber("tuned_score").value_or(NAN));
  EXPECT_EQ(e.profile, text(want, "profile"));
  std::vector<std::string> sites;
  for (uint64_t key : e.sites)
    sites.push_back(siteHex(key));
  EXPECT_EQ(sites, strings(want.getArray("sites"))); // null: none
  EXPECT_EQ(e.priorities, prioritiesOf(want.getObject("priorities"))); // null: none
}

/// The relative paths of the files under `dir`, sorted.
std::vector<std::string> filesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& item : fs::recursive_directory_iterator(dir))
    if (item.is_regular_file())
      out.push_back(fs::relative(item.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TableGoldenTest, TheManifestListsTables) {
  EXPECT_GE(cases("valid").size(), 3u);
  EXPECT_GE(cases("invalid").size(), 40u);
}

class ValidTableTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ValidTableTest, ReadsAsListed) {
  const json::Object& c = *cases("valid")[GetParam()].getAsObject();
  fs::path dir = kGolden / text(c, "table");
  auto table = TuningTable::open(dir);
  ASSERT_TRUE(table.ok()) << table.error().message();
  const TuningManifest& m = table->manifest();
  const json::Object& want = *c.getObject("manifest");
  EXPECT_EQ(m.problem, text(want, "problem"));
  EXPECT_EQ(m.features, strings(want.getArray("features")));
  const json::Object& clang = *want.getObject("clang");
  EXPECT_EQ(m.compiler.path, text(clang, "path"));
  EXPECT_EQ(static_cast<int64_t>(m.compiler.size), clang.getInteger("size"));
  EXPECT_EQ(m.compiler.mtimeNs, clang.getInteger("mtime_ns"));
  EXPECT_EQ(m.compiler.version, text(clang, "version"));
  EXPECT_EQ(static_cast<int64_t>(m.modules), want.getInteger("modules"));
  ASSERT_EQ(m.profiles.has_value(), want.getArray("profiles") != nullptr);
  if (m.profiles)
    EXPECT_EQ(*m.profiles, strings(want.getArray("profiles")));

  auto entries = readEntries(dir);
  ASSERT_TRUE(entries.ok()) << entries.error().message();
  const json::Array& listed = *c.getArray("entries");
  ASSERT_EQ(entries->size(), listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    expectEntry((*entries)[i], *listed[i].getAsObject());
    auto found = table->lookup((*entries)[i].first); // the launcher's way to the same entry
    ASSERT_TRUE(found.ok()) << found.error().message();
    EXPECT_EQ(std::count(found->begin(), found->end(), (*entries)[i]), 1);
  }
  auto index = readIndex(dir);
  ASSERT_TRUE(index.ok()) << index.error().message();
  const json::Array& rows = *c.getArray("index");
  ASSERT_EQ(index->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const json::Object& row = *rows[i].getAsObject();
    EXPECT_EQ((*index)[i].module, text(row, "module"));
    EXPECT_EQ((*index)[i].opt, text(row, "opt"));
    EXPECT_EQ((*index)[i].first, text(row, "first"));
  }
}

TEST(TableGoldenTest, TablesOfTheWriterAreWhatItWritesForWhatTheyHold) {
  size_t checked = 0;
  for (const json::Value& listed : cases("valid")) {
    const json::Object& c = *listed.getAsObject();
    if (text(c, "written_by") != "writer")
      continue; // a table of an older writer
    SCOPED_TRACE(text(c, "table"));
    fs::path dir = kGolden / text(c, "table");
    auto table = TuningTable::open(dir);
    auto entries = readEntries(dir);
    ASSERT_TRUE(table.ok() && entries.ok());
    std::string pattern = (fs::temp_directory_path() / "table-golden-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    fs::path out = pattern;
    const TuningManifest& m = table->manifest();
    auto written = writeTable(out, {m.problem, m.features, m.compiler, *entries});
    std::vector<std::string> names = filesUnder(out);
    std::vector<std::string> texts;
    for (const std::string& name : names)
      texts.push_back(readFile(out / name));
    fs::remove_all(out);
    ASSERT_TRUE(written.ok()) << written.error().message();
    EXPECT_EQ(*written, entries->size());
    ASSERT_EQ(names, filesUnder(dir));
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(texts[i], readFile(dir / names[i])) << names[i];
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

TEST(TableGoldenTest, TheRecordedStreamHashesToItsEntry) {
  const json::Object& c = *cases("valid")[0].getAsObject();
  const json::Object* of = c.getObject("stream_of");
  ASSERT_NE(of, nullptr);
  auto table = TuningTable::open(kGolden / text(c, "table"));
  ASSERT_TRUE(table.ok());
  std::string bytes = readFile(kData / text(*of, "stream"));
  protocol::StreamReader reader;
  reader.feed(bytes);
  reader.finish();
  std::optional<StreamIdentity> identity;
  std::vector<uint64_t> sites;
  protocol::LogEvent event;
  for (;;) {
    auto status = reader.next(event);
    ASSERT_TRUE(status.ok()) << status.error().message();
    if (*status != protocol::ReadStatus::kEvent)
      break;
    if (event.kind == protocol::EventKind::kHeader) {
      auto created = StreamIdentity::create(reader.header(), table->manifest().features);
      ASSERT_TRUE(created.ok()) << created.error().message();
      identity.emplace(std::move(*created));
    } else if (event.kind == protocol::EventKind::kObservation) {
      identity->add(event.tensors);
      sites.push_back(identity->siteKey(event.tensors));
    }
  }
  ASSERT_TRUE(identity.has_value());
  auto entries = table->lookup(identity->first());
  ASSERT_TRUE(entries.ok());
  auto entry = std::find_if(entries->begin(), entries->end(),
                            [&](const TuningEntry& e) { return e.module == text(*of, "module"); });
  ASSERT_NE(entry, entries->end());
  EXPECT_EQ(identity->count(), entry->actions.size());
  EXPECT_EQ(identity->whole(), entry->stream);
  EXPECT_EQ(sites, entry->sites);
}

class InvalidTableFileTest : public ::testing::TestWithParam<size_t> {};

TEST_P(InvalidTableFileTest, IsRefusedWithTheListedError) {
  const json::Object& c = *cases("invalid")[GetParam()].getAsObject();
  fs::path path = kGolden / text(c, "file");
  std::string content = readFile(path);
  std::string kind = text(c, "kind");
  Error error = makeError(ErrorCode::kInternal, "accepted");
  if (kind == "manifest") {
    if (auto read = parseManifest(content, path.string()); !read.ok())
      error = read.error();
  } else if (kind == "entries") {
    if (auto read = parseEntries(content, text(c, "key"), path.string()); !read.ok())
      error = read.error();
  } else if (auto read = parseIndex(content, path.string()); !read.ok()) {
    error = read.error();
  }
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument) << error.message();
  EXPECT_THAT(error.message(),
              StartsWith("tuning file '" + path.string() + "': " + text(c, "error")));
}

/// Test names from the listed names: "valid/inlining" -> "inlining".
template <const char* Key, const char* Field>
std::string nameOf(const ::testing::TestParamInfo<size_t>& info) {
  const json::Object* c = cases(Key)[info.param].getAsObject();
  std::string name = fs::path(c ? text(*c, Field) : "").stem().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name.empty() ? "unnamed_" + std::to_string(info.param) : name;
}

constexpr char kValid[] = "valid";
constexpr char kInvalid[] = "invalid";
constexpr char kTable[] = "table";
constexpr char kFile[] = "file";

INSTANTIATE_TEST_SUITE_P(Golden, ValidTableTest, ::testing::Range<size_t>(0, cases(kValid).size()),
                         (nameOf<kValid, kTable>));
INSTANTIATE_TEST_SUITE_P(Golden, InvalidTableFileTest,
                         ::testing::Range<size_t>(0, cases(kInvalid).size()),
                         (nameOf<kInvalid, kFile>));

} // namespace
} // namespace mlgo::table
