//===- corpus/corpus_test.cc - opening and validating corpora -------------===//
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/description.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

using namespace std::string_literals;

const std::string kCmd = "-cc1\0-O2\0-emit-obj\0"s;

class CorpusTest : public ::testing::Test {
protected:
  void addModule(const std::string& name, std::string_view bitcode = "BC\xC0\xDE",
                 std::string_view cmd = kCmd) {
    writeFile(dir_ / (name + ".bc"), bitcode);
    writeFile(dir_ / (name + ".cmd"), cmd);
  }
  void describe(std::string_view json) { writeFile(dir_ / "corpus_description.json", json); }

  /// Opens the corpus expecting failure; returns the error.
  Error openFails() {
    Result<Corpus> corpus = Corpus::open(dir_.path());
    EXPECT_FALSE(corpus.ok());
    return corpus.ok() ? Error(ErrorCode::kInternal, "opened") : corpus.error();
  }

  TempDir dir_;
};

TEST_F(CorpusTest, OpensAValidCorpus) {
  addModule("a.o", std::string(100, 'x'));
  addModule("lib/b.o", std::string(7, 'y'));
  describe(R"({"modules": ["a.o", "lib/b.o"], "has_thinlto": false})");
  Result<Corpus> corpus = Corpus::open(dir_.path());
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  ASSERT_EQ(corpus->modules().size(), 2u);
  const ModuleSpec& b = corpus->modules()[1];
  EXPECT_EQ(b.name, "lib/b.o");
  EXPECT_EQ(b.bitcodeSize, 7u);
  EXPECT_EQ(b.bitcodePath, std::filesystem::canonical(dir_.path()) / "lib/b.o.bc");
  EXPECT_THAT(b.args, ::testing::ElementsAre("-cc1", "-O2", "-emit-obj"));
  EXPECT_FALSE(b.argsFromOverride);
  EXPECT_FALSE(b.thinLtoIndexPath);
  EXPECT_FALSE(corpus->hasThinLto());
  EXPECT_EQ(corpus->totalBitcodeBytes(), 107u);
  Result<const ModuleSpec*> found = corpus->find("a.o");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->bitcodeSize, 100u);
}

TEST_F(CorpusTest, FindNamesTheMissingModule) {
  addModule("a.o");
  describe(R"({"modules": ["a.o"]})");
  Result<Corpus> corpus = Corpus::open(dir_.path());
  ASSERT_TRUE(corpus.ok());
  Result<const ModuleSpec*> found = corpus->find("nope.o");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(found.error().message(), HasSubstr("'nope.o'"));
}

TEST_F(CorpusTest, UsesGlobalOverrideWithoutCmdFiles) {
  writeFile(dir_ / "a.bc", "BC");
  describe(R"({"modules": ["a"], "has_thinlto": false, "global_command_override": ["-O2", "-c"]})");
  Result<Corpus> corpus = Corpus::open(dir_.path());
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  EXPECT_TRUE(corpus->hasGlobalCommandOverride());
  EXPECT_TRUE(corpus->modules()[0].argsFromOverride);
  EXPECT_THAT(corpus->modules()[0].args, ::testing::ElementsAre("-O2", "-c"));
}

TEST_F(CorpusTest, ThinLtoModulesCarryTheirIndex) {
  addModule("a.o");
  writeFile(dir_ / "a.o.thinlto.bc", "idx");
  describe(R"({"modules": ["a.o"], "has_thinlto": true})");
  Result<Corpus> corpus = Corpus::open(dir_.path());
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  ASSERT_TRUE(corpus->modules()[0].thinLtoIndexPath);
  EXPECT_EQ(corpus->modules()[0].thinLtoIndexPath->filename(), "a.o.thinlto.bc");
}

TEST_F(CorpusTest, MissingThinLtoIndexIsNotFound) {
  addModule("a.o");
  describe(R"({"modules": ["a.o"], "has_thinlto": true})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kNotFound);
  EXPECT_THAT(error.message(), HasSubstr("ThinLTO index"));
}

TEST_F(CorpusTest, MissingRoot) {
  Result<Corpus> corpus = Corpus::open(dir_ / "absent");
  ASSERT_FALSE(corpus.ok());
  EXPECT_EQ(corpus.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(corpus.error().message(), HasSubstr("corpus directory"));
}

TEST_F(CorpusTest, MissingDescription) {
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kNotFound);
  EXPECT_THAT(error.message(), HasSubstr("corpus_description.json"));
  EXPECT_THAT(error.message(), HasSubstr("does not exist"));
}

TEST_F(CorpusTest, UnreadableDescription) {
  std::filesystem::create_directories(dir_ / "corpus_description.json");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kIo);
  EXPECT_THAT(error.message(), HasSubstr("is a directory"));
}

TEST_F(CorpusTest, MalformedJson) {
  describe(R"({"modules": ["a.o",)");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kParse);
  EXPECT_THAT(error.message(), HasSubstr("malformed JSON"));
}

TEST_F(CorpusTest, WrongTypes) {
  describe(R"({"modules": "a.o"})");
  EXPECT_THAT(openFails().message(), HasSubstr("'modules' must be an array of strings"));
  describe(R"({"modules": [1]})");
  EXPECT_THAT(openFails().message(), HasSubstr("'modules'[0] is not a string"));
  describe(R"({"modules": ["a"], "has_thinlto": "no"})");
  EXPECT_THAT(openFails().message(), HasSubstr("'has_thinlto' must be true or false"));
  describe(R"({"has_thinlto": false})");
  EXPECT_THAT(openFails().message(), HasSubstr("missing the 'modules' key"));
  describe(R"([1, 2])");
  EXPECT_THAT(openFails().message(), HasSubstr("JSON object"));
}

TEST_F(CorpusTest, EmptyModules) {
  describe(R"({"modules": [], "has_thinlto": false})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kParse);
  EXPECT_THAT(error.message(), HasSubstr("'modules' is empty"));
}

TEST_F(CorpusTest, UnspecifiedOverrideNamesTheFix) {
  writeFile(dir_ / "a.bc", "BC");
  describe(R"({"modules": ["a"], "global_command_override": ["<UNSPECIFIED>"]})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kParse);
  EXPECT_THAT(error.message(), HasSubstr("<UNSPECIFIED>"));
  EXPECT_THAT(error.message(), HasSubstr("replace it with the clang arguments"));
}

TEST_F(CorpusTest, CmdWithoutCc1) {
  addModule("a.o", "BC", "-O2\0-c\0"s);
  describe(R"({"modules": ["a.o"]})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kParse);
  EXPECT_THAT(error.message(), HasSubstr("a.o.cmd"));
  EXPECT_THAT(error.message(), HasSubstr("does not start with -cc1"));
}

TEST_F(CorpusTest, MissingBitcodeAndCmd) {
  writeFile(dir_ / "a.o.cmd", kCmd);
  describe(R"({"modules": ["a.o"]})");
  Error noBc = openFails();
  EXPECT_EQ(noBc.code(), ErrorCode::kNotFound);
  EXPECT_THAT(noBc.message(), HasSubstr("bitcode file"));
  EXPECT_THAT(noBc.message(), HasSubstr("module 'a.o'"));

  writeFile(dir_ / "b.o.bc", "BC");
  describe(R"({"modules": ["b.o"]})");
  Error noCmd = openFails();
  EXPECT_EQ(noCmd.code(), ErrorCode::kNotFound);
  EXPECT_THAT(noCmd.message(), HasSubstr("module command file"));
}

TEST_F(CorpusTest, UnreadableCmd) {
  writeFile(dir_ / "a.o.bc", "BC");
  std::filesystem::create_directories(dir_ / "a.o.cmd");
  describe(R"({"modules": ["a.o"]})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kIo);
  EXPECT_THAT(error.message(), HasSubstr("a.o.cmd"));
}

TEST_F(CorpusTest, DuplicateModule) {
  addModule("a.o");
  describe(R"({"modules": ["a.o", "a.o"]})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kParse);
  EXPECT_THAT(error.message(), HasSubstr("listed twice"));
}

TEST_F(CorpusTest, EscapingNamesAreRefusedWithoutReading) {
  // A real module outside the corpus that an escaping name would reach.
  TempDir outside;
  writeFile(outside / "evil.bc", "BC");
  writeFile(outside / "evil.cmd", kCmd);
  std::string up = std::filesystem::relative(outside / "evil", dir_.path()).generic_string();
  ASSERT_TRUE(up.starts_with("../"));
  for (const std::string& name :
       {up, (outside / "evil").string(), "a/../../x"s, "./a"s, ""s, "a//b"s}) {
    describe(fmt::format(R"({{"modules": ["{}"]}})", name));
    Error error = openFails();
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument) << name;
    EXPECT_THAT(error.message(), HasSubstr("not a plain relative path")) << name;
  }
}

TEST_F(CorpusTest, SymlinkOutOfTheRootIsRefused) {
  TempDir outside;
  writeFile(outside / "evil.o.bc", "BC");
  writeFile(outside / "evil.o.cmd", kCmd);
  std::filesystem::create_directory_symlink(outside.path(), dir_ / "link");
  describe(R"({"modules": ["link/evil.o"]})");
  Error error = openFails();
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(error.message(), HasSubstr("resolves outside the corpus directory"));

  // A symlink that stays inside is fine.
  addModule("real/m.o");
  std::filesystem::create_directory_symlink(dir_ / "real", dir_ / "alias");
  describe(R"({"modules": ["alias/m.o"]})");
  EXPECT_TRUE(Corpus::open(dir_.path()).ok());
}

TEST(DefaultDemoCorpusDir, KnowsBothVariants) {
  Result<std::filesystem::path> oz = defaultDemoCorpusDir("Oz");
  Result<std::filesystem::path> o2 = defaultDemoCorpusDir("O2");
  ASSERT_TRUE(oz.ok());
  ASSERT_TRUE(o2.ok());
  EXPECT_EQ(*oz, std::filesystem::path(MLGO_BINARY_DIR) / "corpus" / "demo-Oz");
  EXPECT_EQ(*o2, std::filesystem::path(MLGO_BINARY_DIR) / "corpus" / "demo-O2");
  Result<std::filesystem::path> bad = defaultDemoCorpusDir("O3");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Description, RoundTrips) {
  CorpusDescription description;
  description.modules = {"a.o", "lib/\"q\".o"};
  description.hasThinLto = true;
  description.globalCommandOverride = std::vector<std::string>{"-O2", "-c"};
  Result<CorpusDescription> parsed = parseDescription(formatDescription(description), "t");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(*parsed, description);
}

} // namespace
} // namespace mlgo::corpus
