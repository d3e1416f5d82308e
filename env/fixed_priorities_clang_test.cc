//===- env/fixed_priorities_clang_test.cc - evictions under set priorities -===//
///
/// With clang-22 on the -O2 demo corpus: an environment given a priorities
/// file opens clang's priority channel for the modules it lists and answers
/// it itself (every priority question of the compile: a listed module's
/// functions without multipliers get the `weight` fallback), while the
/// agent answers the evictions; the modules it does not list compile as
/// without the file. Multipliers change the compile.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "testing/test_util.h"

#include <gtest/gtest.h>

#include <fstream>

namespace mlgo::env {
namespace {

struct Played {
  double score = 0;
  uint64_t observations = 0, agentSteps = 0, priorityAnswers = 0;
  std::vector<std::string> functions;
};

class FixedPrioritiesClangTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
  }

  std::unique_ptr<Environment> make(const std::string& problem, const std::string& file) {
    EnvironmentOptions options;
    options.problem = problem;
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = 2;
    if (!file.empty()) {
      options.fixedPriorities = scratch_.path() / "priorities.json";
      std::ofstream(options.fixedPriorities) << file;
    }
    auto env = Environment::create(options);
    if (!env.ok())
      lastError_ = env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  /// Plays `module` answering every eviction with the default decision.
  static Played play(Environment& env, const std::string& module) {
    Played out;
    auto reset = env.reset({module, std::nullopt, {}});
    EXPECT_TRUE(reset.ok()) << reset.error().message();
    if (!reset.ok())
      return out;
    StepResult step = reset->step;
    while (!step.terminated && !step.truncated) {
      auto st = env.step(reset->episode, *step.defaultAction, step);
      EXPECT_TRUE(st.ok()) << st.error().message();
      if (!st.ok())
        return out;
    }
    out.score = step.summary->policyScore;
    out.observations = step.summary->observations;
    out.agentSteps = step.summary->agentSteps;
    out.priorityAnswers = step.summary->priorityAnswers;
    for (const ContextScore& c : step.summary->contexts)
      out.functions.push_back(c.name);
    return out;
  }

  support::CleanupScope scope_;
  support::TempDir scratch_;
  std::string lastError_;
};

TEST_F(FixedPrioritiesClangTest, ListedModulesGetTheHostsPrioritiesOthersClangs) {
  auto plain = make("regalloc", "");
  ASSERT_NE(plain, nullptr) << lastError_;
  Played ownSha = play(*plain, "sha256.o");
  Played ownLz = play(*plain, "lz77.o");
  plain.reset();

  auto fixed = make("regalloc", R"({"modules": [{"module": "sha256.o", "functions": {}}]})");
  ASSERT_NE(fixed, nullptr) << lastError_;
  Played weightSha = play(*fixed, "sha256.o");
  Played lz = play(*fixed, "lz77.o");
  EXPECT_GT(weightSha.priorityAnswers, 0u);
  EXPECT_EQ(weightSha.observations, weightSha.agentSteps + weightSha.priorityAnswers);
  EXPECT_NE(weightSha.score, ownSha.score) << "the weight fallback is not clang's priority";
  EXPECT_EQ(lz.priorityAnswers, 0u);
  EXPECT_EQ(lz.score, ownLz.score);
  EXPECT_EQ(lz.agentSteps, ownLz.agentSteps);
  // The same priorities, the same compile.
  Played again = play(*fixed, "sha256.o");
  EXPECT_EQ(again.score, weightSha.score);
  EXPECT_EQ(again.priorityAnswers, weightSha.priorityAnswers);
}

TEST_F(FixedPrioritiesClangTest, MultipliersChangeTheCompile) {
  // Every one of the first 64 priority questions of every function of
  // sha256.o set to 0 (allocated last) instead of the fallback's.
  std::string steps;
  for (int k = 0; k < 64; ++k)
    steps += (k ? ", \"" : "\"") + std::to_string(k) + "\": 0";
  auto weight = make("regalloc", R"({"modules": [{"module": "sha256.o", "functions": {}}]})");
  ASSERT_NE(weight, nullptr) << lastError_;
  Played base = play(*weight, "sha256.o");
  weight.reset();
  std::string functions;
  ASSERT_FALSE(base.functions.empty());
  for (const std::string& f : base.functions)
    functions += std::string(functions.empty() ? "" : ", ") + "\"" + f +
                 "\": {\"multipliers\": {" + steps + "}}";
  auto zeroed = make("regalloc", R"({"modules": [{"module": "sha256.o", "functions": {)" +
                                     functions + "}}]}");
  ASSERT_NE(zeroed, nullptr) << lastError_;
  Played changed = play(*zeroed, "sha256.o");
  EXPECT_GT(changed.priorityAnswers, 0u);
  EXPECT_NE(changed.score, base.score);
}

TEST_F(FixedPrioritiesClangTest, OnlyTheEvictionProblemTakesAFile) {
  for (const char* problem : {"regalloc-priority", "inlining"}) {
    EXPECT_EQ(make(problem, R"({"modules": []})"), nullptr) << problem;
    EXPECT_NE(lastError_.find("only the regalloc problem"), std::string::npos) << lastError_;
  }
  EXPECT_EQ(make("regalloc", R"({"modules": [{"module": 1}]})"), nullptr);
  EXPECT_NE(lastError_.find("priorities file"), std::string::npos) << lastError_;
}

} // namespace
} // namespace mlgo::env
