//===- corpus/corpus_tools_test.cc - make and combine --------------------===//
#include "mlgo/corpus/corpus.h"
#include "mlgo/corpus/corpus_tools.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

TEST(MakeCorpus, CopiesBitcodeAndWritesOverride) {
  TempDir in, out;
  writeFile(in / "x.bc", "BC1");
  writeFile(in / "sub/y.bc", "BC22");
  writeFile(in / "notes.txt", "ignored");
  Result<CorpusDescription> made = makeCorpus(in.path(), out / "c", {"-O2", "-c"});
  ASSERT_TRUE(made.ok()) << made.error().message();
  EXPECT_THAT(made->modules, ElementsAre("sub/y", "x"));
  Result<Corpus> corpus = Corpus::open(out / "c");
  ASSERT_TRUE(corpus.ok()) << corpus.error().message();
  EXPECT_TRUE(corpus->hasGlobalCommandOverride());
  EXPECT_EQ(corpus->modules()[0].bitcodeSize, 4u);
  EXPECT_THAT(corpus->modules()[1].args, ElementsAre("-O2", "-c"));
}

TEST(MakeCorpus, Errors) {
  TempDir in, out;
  Result<CorpusDescription> missing = makeCorpus(in / "nope", out.path(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  Result<CorpusDescription> empty = makeCorpus(in.path(), out.path(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message(), HasSubstr("no .bc files"));
  writeFile(in / "x.bc", "BC");
  Result<CorpusDescription> inside = makeCorpus(in.path(), in / "out", {});
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().code(), ErrorCode::kInvalidArgument);
}

TEST(CombineCorpora, PrefixesModulesBySubdirectory) {
  TempDir root;
  writeFile(root / "b/corpus_description.json", R"({"modules": ["m1"], "has_thinlto": false})");
  writeFile(root / "a/corpus_description.json",
            R"({"modules": ["m2", "d/m3"], "has_thinlto": false})");
  std::filesystem::create_directories(root / "not-a-corpus");
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_TRUE(combined.ok()) << combined.error().message();
  EXPECT_THAT(combined->modules, ElementsAre("a/m2", "a/d/m3", "b/m1"));
  Result<CorpusDescription> written = readDescription(root.path());
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, *combined);
}

TEST(CombineCorpora, RefusesDifferingCorpora) {
  TempDir root;
  writeFile(root / "a/corpus_description.json", R"({"modules": ["m"], "has_thinlto": false})");
  writeFile(root / "b/corpus_description.json", R"({"modules": ["m"], "has_thinlto": true})");
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_FALSE(combined.ok());
  EXPECT_EQ(combined.error().code(), ErrorCode::kParse);
  EXPECT_THAT(combined.error().message(), HasSubstr("differ by more than their modules"));
}

TEST(CombineCorpora, NothingToCombine) {
  TempDir root;
  Result<CorpusDescription> combined = combineCorpora(root.path());
  ASSERT_FALSE(combined.ok());
  EXPECT_EQ(combined.error().code(), ErrorCode::kNotFound);
}

} // namespace
} // namespace mlgo::corpus
