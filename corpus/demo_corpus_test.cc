//===- corpus/demo_corpus_test.cc - the bundled demo corpus, with clang ---===//
///
/// The build compiles data/demo_corpus/src/* with -Xclang -fembed-bitcode=all and
/// extracts them with `mlgo-env corpus extract`. These tests check the result
/// against the sources and the original objects: one module per source, and
/// every module's recompile command reproduces the original object's
/// executable sections byte for byte.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"

#include "object_sections.h"
#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;

std::set<std::string> expectedModuleNames() {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(MLGO_SOURCE_DIR) / "data/demo_corpus/src")) {
    std::string ext = entry.path().extension().string();
    if (ext == ".c" || ext == ".cpp")
      names.insert(entry.path().stem().string() + ".o");
  }
  return names;
}

class DemoCorpus : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    Result<fs::path> dir = defaultDemoCorpusDir(GetParam());
    ASSERT_TRUE(dir.ok());
    Result<Corpus> corpus = Corpus::open(*dir);
    ASSERT_TRUE(corpus.ok()) << corpus.error().message()
                             << " (the demo corpus is built by the default build target)";
    corpus_.emplace(std::move(*corpus));
  }
  std::optional<Corpus> corpus_;
};

TEST_P(DemoCorpus, HasOneModulePerSource) {
  std::set<std::string> expected = expectedModuleNames();
  ASSERT_FALSE(expected.empty());
  std::set<std::string> actual;
  for (const ModuleSpec& module : corpus_->modules()) {
    actual.insert(module.name);
    EXPECT_GT(module.bitcodeSize, 0u) << module.name;
    ASSERT_FALSE(module.args.empty());
    EXPECT_EQ(module.args.front(), "-cc1");
    EXPECT_THAT(module.args, ::testing::Contains("-" + GetParam())) << module.name;
  }
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(actual.size(), corpus_->modules().size());
}

TEST_P(DemoCorpus, RecompileReproducesTheOriginalText) {
  testing::TempDir out;
  fs::path objects = fs::path(MLGO_BINARY_DIR) / "data/demo_corpus" / ("obj-" + GetParam());
  const std::vector<ModuleSpec>& modules = corpus_->modules();
  std::atomic<std::size_t> next{0};
  std::mutex failuresMutex;
  std::vector<std::string> failures;
  auto fail = [&](std::string message) {
    std::lock_guard lock(failuresMutex);
    failures.push_back(std::move(message));
  };
  auto work = [&] {
    for (std::size_t i = next++; i < modules.size(); i = next++) {
      const ModuleSpec& module = modules[i];
      fs::path recompiled = out / (module.name + ".re.o");
      Result<std::vector<std::string>> args = recompileArgs(module, recompiled);
      if (!args) {
        fail(module.name + ": " + args.error().message());
        continue;
      }
      for (const char* stale : {"-fembed-bitcode=all", "-dependency-file", "-MT"}) {
        if (std::find(args->begin(), args->end(), stale) != args->end())
          fail(module.name + ": recompile command still has " + stale);
      }
      fs::path log = out / (module.name + ".log");
      if (testing::run(MLGO_CLANG, *args, log.string()) != 0) {
        fail(module.name + ": clang failed: " + testing::readFile(log));
        continue;
      }
      auto original = testing::executableSections(objects / module.name);
      auto again = testing::executableSections(recompiled);
      if (!original || !again) {
        fail(module.name + ": cannot read the objects");
      } else if (original->empty() || original->at(".text").empty()) {
        fail(module.name + ": the original has no code");
      } else if (*original != *again) {
        fail(module.name + ": executable sections differ after recompiling");
      }
    }
  };
  std::vector<std::jthread> pool;
  for (int t = 0; t < 2; ++t)
    pool.emplace_back(work);
  pool.clear(); // join
  EXPECT_THAT(failures, ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Variants, DemoCorpus, ::testing::Values("O2", "Oz"));

} // namespace
} // namespace mlgo::corpus
