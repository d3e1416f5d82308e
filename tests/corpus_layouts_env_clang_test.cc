//===- tests/corpus_layouts_env_clang_test.cc - episodes on built corpora -===//
///
/// Episodes on corpora extracted from real builds (support/corpus_layouts.h):
/// default-policy inlining at -Oz scores reward 0 on an ordinary and a
/// ThinLTO corpus, and both register allocation problems run on the ThinLTO
/// one.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"
#include "support/corpus_layouts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::corpus {
namespace {

namespace fs = std::filesystem;
using testing::CorpusLayouts;

void expectDefaultInliningScoresZero(const fs::path& corpus, const fs::path& scratch) {
  env::EnvironmentOptions options;
  options.problem = "inlining";
  options.corpus = corpus;
  options.clang = MLGO_CLANG;
  options.cacheDir = scratch / "cache";
  options.jobs = 2;
  auto env = env::Environment::create(options);
  ASSERT_TRUE(env.ok()) << env.error().message();
  Result<Corpus> opened = Corpus::open(corpus);
  ASSERT_TRUE(opened.ok());
  std::size_t decided = 0;
  for (const ModuleSpec& module : opened->modules()) {
    auto reset = (*env)->reset({module.name, std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    env::StepResult step = reset->step;
    while (!step.terminated && !step.truncated) {
      ASSERT_TRUE(step.defaultAction);
      ASSERT_TRUE((*env)->step(reset->episode, *step.defaultAction, step).ok());
    }
    ASSERT_TRUE(step.summary);
    EXPECT_EQ(step.reward, 0.0) << module.name;
    EXPECT_GT(step.summary->defaultScore, 0) << module.name;
    decided += step.summary->observations > 0;
  }
  EXPECT_GT(decided, 0u) << "no module made an inlining decision";
}

TEST_F(CorpusLayouts, DefaultInliningScoresZeroOnAnOrdinaryCorpus) {
  ASSERT_TRUE(ensure("abs")) << *setupError_;
  expectDefaultInliningScoresZero(layout("abs").corpus, *dir_ / "env-abs");
}

TEST_F(CorpusLayouts, DefaultInliningScoresZeroOnAThinLtoCorpus) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  expectDefaultInliningScoresZero(layout("thin").corpus, *dir_ / "env-thin");
}

TEST_F(CorpusLayouts, RegisterAllocationEpisodesRunOnAThinLtoCorpus) {
  ASSERT_TRUE(ensure("thin")) << *setupError_;
  for (const char* problem : {"regalloc", "regalloc-priority"}) {
    env::EnvironmentOptions options;
    options.problem = problem;
    options.corpus = layout("thin").corpus;
    options.clang = MLGO_CLANG;
    options.useDiskCache = false;
    options.jobs = 2;
    auto env = env::Environment::create(options);
    ASSERT_TRUE(env.ok()) << env.error().message();
    std::size_t observations = 0;
    for (const char* module : {"list.o", "geom.o"}) {
      auto reset = (*env)->reset({module, std::nullopt, {}});
      ASSERT_TRUE(reset.ok()) << problem << " " << module << ": " << reset.error().message();
      env::StepResult step = reset->step;
      while (!step.terminated && !step.truncated) {
        ASSERT_TRUE(step.fallbackAction);
        ASSERT_TRUE((*env)->step(reset->episode, *step.fallbackAction, step).ok());
      }
      ASSERT_TRUE(step.summary) << problem << " " << module;
      EXPECT_TRUE(std::isfinite(step.reward)) << problem << " " << module;
      observations += step.summary->observations;
    }
    if (std::string_view(problem) == "regalloc-priority")
      EXPECT_GT(observations, 0u); // every live range asks for a priority
  }
}

} // namespace
} // namespace mlgo::corpus
