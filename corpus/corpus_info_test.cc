//===- corpus/corpus_info_test.cc - corpus info on synthetic corpora -------===//
#include "mlgo/corpus/corpus_info.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace mlgo::corpus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::writeFile;

const std::string kBitcode = std::string("BC\xC0\xDE", 4) + "rest";

std::string cmd(std::initializer_list<std::string_view> args) {
  std::string out;
  for (std::string_view a : args) {
    out += a;
    out.push_back('\0');
  }
  return out;
}

std::map<std::string, std::string> problemsByModule(const CorpusInfo& info) {
  std::map<std::string, std::string> byModule;
  for (const CorpusProblem& p : info.problems)
    byModule[p.module] += p.message + "\n";
  return byModule;
}

TEST(CorpusInfo, SummarisesSizesAndFlags) {
  TempDir dir;
  writeFile(dir / "corpus_description.json", R"({"modules": ["a.o", "sub/b.o", "c.o"]})");
  writeFile(dir / "a.o.bc", kBitcode);
  writeFile(dir / "sub/b.o.bc", kBitcode + std::string(100, 'x'));
  writeFile(dir / "c.o.bc", kBitcode + std::string(10, 'x'));
  writeFile(dir / "a.o.cmd", cmd({"-cc1", "-Oz", "-triple", "x86_64-pc-linux-gnu", "-std=c11",
                                  "-main-file-name", "a.c", "-I/x/include"}));
  writeFile(dir / "sub/b.o.cmd", cmd({"-cc1", "-O2", "-triple", "x86_64-pc-linux-gnu",
                                      "-main-file-name", "b.c", "-I/y/include"}));
  writeFile(dir / "c.o.cmd", cmd({"-cc1", "-Oz", "-triple", "x86_64-pc-linux-gnu", "-std=c11",
                                  "-main-file-name", "c.c", "-I/z"}));
  Result<CorpusInfo> info = inspectCorpus(dir.path());
  ASSERT_TRUE(info.ok()) << info.error().message();
  EXPECT_EQ(info->modules, 3u);
  EXPECT_EQ(info->bitcodeBytes, 3 * kBitcode.size() + 110);
  EXPECT_EQ(info->smallestModule, "a.o");
  EXPECT_EQ(info->largestModule, "sub/b.o");
  EXPECT_EQ(info->medianBytes, kBitcode.size() + 10);
  EXPECT_FALSE(info->hasThinLto);
  ASSERT_EQ(info->optimisationLevels.size(), 2u);
  EXPECT_EQ(info->optimisationLevels[0].flag, "-Oz");
  EXPECT_EQ(info->optimisationLevels[0].modules, 2u);
  ASSERT_EQ(info->targets.size(), 1u);
  EXPECT_EQ(info->targets[0].flag, "x86_64-pc-linux-gnu");
  EXPECT_THAT(info->commonFlags, ElementsAre("-I…", "-main-file-name …"));
  ASSERT_EQ(info->otherFlags.size(), 1u);
  EXPECT_EQ(info->otherFlags[0].flag, "-std=c11");
  EXPECT_TRUE(info->problems.empty());
  std::string text = formatCorpusInfo(*info);
  EXPECT_THAT(text, HasSubstr("modules: 3"));
  EXPECT_THAT(text, HasSubstr("ThinLTO: no"));
  EXPECT_THAT(text, HasSubstr("-Oz (2) -O2 (1)"));
  EXPECT_THAT(text, HasSubstr("problems: none"));
}

TEST(CorpusInfo, ListsEveryModuleThatCannotCompile) {
  TempDir dir;
  writeFile(dir / "corpus_description.json",
            R"({"modules": ["ok.o", "nobc.o", "notbc.o", "badcmd.o", "nocmd.o", "../out.o",
                            "ok.o"]})");
  for (const char* m : {"ok.o", "badcmd.o", "nocmd.o"})
    writeFile(dir / (std::string(m) + ".bc"), kBitcode);
  writeFile(dir / "notbc.o.bc", "not bitcode");
  for (const char* m : {"ok.o", "nobc.o", "notbc.o"})
    writeFile(dir / (std::string(m) + ".cmd"), cmd({"-cc1", "-O2"}));
  writeFile(dir / "badcmd.o.cmd", cmd({"clang", "-O2"}));
  Result<CorpusInfo> info = inspectCorpus(dir.path());
  ASSERT_TRUE(info.ok()) << info.error().message();
  auto problems = problemsByModule(*info);
  EXPECT_EQ(problems.size(), 6u);
  EXPECT_THAT(problems["nobc.o"], HasSubstr("does not exist"));
  EXPECT_THAT(problems["notbc.o"], HasSubstr("is not LLVM bitcode"));
  EXPECT_THAT(problems["badcmd.o"], HasSubstr("does not start with -cc1"));
  EXPECT_THAT(problems["nocmd.o"], HasSubstr("does not exist"));
  EXPECT_THAT(problems["../out.o"], HasSubstr("not a plain relative path"));
  EXPECT_EQ(problems["ok.o"], "listed twice in the description\n"); // its files are fine
  EXPECT_THAT(formatCorpusInfo(*info), HasSubstr("problems (6)"));
}

TEST(CorpusInfo, ThinLtoIndicesAndThePlaceholderOverride) {
  TempDir dir;
  writeFile(dir / "corpus_description.json",
            R"({"modules": ["a.o", "b.o"], "has_thinlto": true,
                "global_command_override": ["<UNSPECIFIED>"]})");
  writeFile(dir / "a.o.bc", kBitcode);
  writeFile(dir / "b.o.bc", kBitcode);
  writeFile(dir / "a.o.thinlto.bc", kBitcode);
  Result<CorpusInfo> info = inspectCorpus(dir.path());
  ASSERT_TRUE(info.ok()) << info.error().message();
  EXPECT_TRUE(info->hasThinLto);
  auto problems = problemsByModule(*info);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[""], HasSubstr("placeholder"));
  // Bitcode magic, but no summary index: clang would refuse it.
  EXPECT_THAT(problems["a.o"], HasSubstr("a.o.thinlto.bc' is not a summary index"));
  ASSERT_TRUE(info->imports);
  EXPECT_EQ(info->imports->modulesCounted, 0u);
  EXPECT_THAT(problems["b.o"], HasSubstr("b.o.thinlto.bc' does not exist"));
  EXPECT_THAT(problems["b.o"], HasSubstr("--thinlto-emit-index-files"));
  std::string text = formatCorpusInfo(*info);
  EXPECT_THAT(text, HasSubstr("ThinLTO: yes"));
  EXPECT_THAT(text, HasSubstr("ThinLTO imports: 0 of 0 modules import"));
  EXPECT_THAT(text, HasSubstr("corpus: 'global_command_override'"));
}

TEST(CorpusInfo, NothingToInspect) {
  TempDir dir;
  Result<CorpusInfo> info = inspectCorpus(dir / "nope");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), ErrorCode::kNotFound);
  info = inspectCorpus(dir.path());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), ErrorCode::kNotFound);
  writeFile(dir / "corpus_description.json", "{");
  info = inspectCorpus(dir.path());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), ErrorCode::kParse);
}

} // namespace
} // namespace mlgo::corpus
