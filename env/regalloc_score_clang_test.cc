//===- env/regalloc_score_clang_test.cc - the regalloc_score option ---------===//
///
/// With the real clang-22 on a demo module that copies registers: the
/// `instructions` score is spills + reloads + copies (folded ones 0) of the
/// same remarks LLVM's weighting reads, read independently with
/// llvm-remarkutil; it changes the score; the `executed` score is the
/// estimate (executed_estimate.h) of the plain object; and the baseline cache
/// never hands one kind's default score to another.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/env/executed_estimate.h"
#include "mlgo/env/run_compile.h"
#include "testing/test_util.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kModule = "sha256.o";

/// The module's SpillReloadCopies costs, summed over its functions per
/// remark key ("TotalCopiesCost"...), from a plain compile's remarks read by
/// llvm-remarkutil (not by mlgo-env's reader).
std::map<std::string, double> remarkutilCosts(const corpus::ModuleSpec& module) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto dir = support::TempDir::create(scope, "mlgo-env-score-option-");
  EXPECT_TRUE(dir.ok());
  std::filesystem::path remarks = dir->path() / "r.opt";
  CompileCommand compile;
  compile.argv = {MLGO_CLANG};
  auto args = corpus::recompileArgs(module, dir->path() / "out.o");
  EXPECT_TRUE(args.ok());
  compile.argv.insert(compile.argv.end(), args->begin(), args->end());
  for (const char* arg : {"-opt-record-file", "", "-opt-record-passes", "regalloc",
                          "-opt-record-format", "bitstream"})
    compile.argv.push_back(*arg ? arg : remarks.string());
  EXPECT_TRUE(runCompile(scope, compile, std::chrono::seconds(120)).ok());
  CompileCommand yaml;
  yaml.argv = {"llvm-remarkutil-22", "bitstream2yaml", remarks.string()};
  auto listing = runCompile(scope, yaml, std::chrono::seconds(60));
  EXPECT_TRUE(listing.ok());
  std::map<std::string, double> totals;
  std::istringstream in(listing.ok() ? listing->output : "");
  std::string line, name;
  while (std::getline(in, line)) {
    if (line.rfind("Name:", 0) == 0)
      name = line.substr(line.find_first_not_of(' ', 5));
    size_t dash = line.find("- Total");
    if (name != "SpillReloadCopies" || dash == std::string::npos)
      continue;
    std::string key = line.substr(dash + 2, line.find(':', dash) - dash - 2);
    std::string value = line.substr(line.find(':', dash) + 1);
    totals[key] += std::stod(value.substr(value.find_first_not_of(" '")));
  }
  return totals;
}

class RegallocScoreOption : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
  }

  std::unique_ptr<Environment> make(const std::string& score) {
    EnvironmentOptions options;
    options.problem = "regalloc";
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache"; // Shared by both kinds.
    options.jobs = 1;
    options.problemOptions.regallocScore = score;
    auto env = Environment::create(options);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  /// An episode of kModule answered by the fallback policy.
  EpisodeSummary play(Environment& env) {
    auto reset = env.reset({std::string(kModule), std::nullopt, {}});
    EXPECT_TRUE(reset.ok()) << reset.error().message();
    if (!reset.ok())
      return {};
    StepResult step = reset->step;
    while (!step.terminated && !step.truncated)
      if (!env.step(reset->episode, *step.fallbackAction, step).ok())
        return {};
    return *step.summary;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir scratch_;
};

TEST_F(RegallocScoreOption, InstructionsWeighsCopiesLikeReloadsAndFoldedOnesZero) {
  auto llvm = make("llvm");
  ASSERT_TRUE(llvm);
  const corpus::ModuleSpec* spec = nullptr;
  for (const auto& module : llvm->corpus().modules())
    spec = module.name == kModule ? &module : spec;
  ASSERT_NE(spec, nullptr);
  std::map<std::string, double> c = remarkutilCosts(*spec);
  ASSERT_GT(c["TotalCopiesCost"], 0) << "the module must copy registers";
  double llvmExpected = 4 * (c["TotalReloadsCost"] + c["TotalFoldedReloadsCost"]) +
                        c["TotalSpillsCost"] + c["TotalFoldedSpillsCost"] +
                        0.2 * c["TotalCopiesCost"];
  double instructionsExpected = c["TotalSpillsCost"] + c["TotalReloadsCost"] + c["TotalCopiesCost"];
  ASSERT_NE(llvmExpected, instructionsExpected);

  EpisodeSummary byLlvm = play(*llvm);
  EXPECT_FALSE(byLlvm.baselineCached);
  EXPECT_NEAR(byLlvm.defaultScore, llvmExpected, 1e-9 * llvmExpected);
  llvm.reset();

  // The same cache: the llvm score of the module is there, and not taken.
  auto instructions = make("instructions");
  ASSERT_TRUE(instructions);
  EXPECT_NE(instructions->describe().rewardDefinition.find("spills + reloads + copies"),
            std::string::npos)
      << instructions->describe().rewardDefinition;
  EpisodeSummary byInstructions = play(*instructions);
  EXPECT_FALSE(byInstructions.baselineCached);
  EXPECT_NEAR(byInstructions.defaultScore, instructionsExpected, 1e-9 * instructionsExpected);
  double sum = 0;
  for (const auto& context : byInstructions.contexts)
    sum += context.policy;
  EXPECT_NEAR(sum, byInstructions.policyScore, 1e-9 * (1 + sum));
  instructions.reset();

  // Each kind now finds its own entry.
  for (const char* score : {"instructions", "llvm"}) {
    auto again = make(score);
    ASSERT_TRUE(again);
    EpisodeSummary s = play(*again);
    EXPECT_TRUE(s.baselineCached) << score;
    EXPECT_EQ(s.defaultScore,
              std::string(score) == "llvm" ? byLlvm.defaultScore : byInstructions.defaultScore);
  }
}

TEST_F(RegallocScoreOption, ExecutedIsTheEstimateOfThePlainObject) {
  auto llvm = make("llvm");
  ASSERT_TRUE(llvm);
  play(*llvm); // The shared cache now holds the llvm score's default.
  const corpus::ModuleSpec* spec = nullptr;
  for (const auto& module : llvm->corpus().modules())
    spec = module.name == kModule ? &module : spec;
  ASSERT_NE(spec, nullptr);
  // The plain compile with the estimate's arguments, read on its own.
  fs::path object = scratch_.path() / "plain.o";
  CompileCommand compile;
  compile.argv = {MLGO_CLANG};
  auto args = corpus::recompileArgs(*spec, object);
  ASSERT_TRUE(args.ok());
  compile.argv.insert(compile.argv.end(), args->begin(), args->end());
  for (std::string& arg : executedScoreArgs(!args->empty() && (*args)[0] == "-cc1"))
    compile.argv.push_back(std::move(arg));
  ASSERT_TRUE(runCompile(scope_, compile, std::chrono::seconds(120)).ok());
  auto expected = executedEstimate(object);
  ASSERT_TRUE(expected.ok()) << expected.error().message();
  ASSERT_GT(expected->total, 0);
  llvm.reset();

  // The same cache as the llvm score's: its entry is not taken.
  auto executed = make("executed");
  ASSERT_TRUE(executed);
  EXPECT_NE(executed->describe().rewardDefinition.find("estimated to execute"),
            std::string::npos)
      << executed->describe().rewardDefinition;
  EpisodeSummary byExecuted = play(*executed);
  EXPECT_FALSE(byExecuted.baselineCached);
  EXPECT_NEAR(byExecuted.defaultScore, expected->total, 1e-9 * expected->total);
  ASSERT_EQ(byExecuted.contexts.size(), expected->contexts.size());
  for (size_t i = 0; i < expected->contexts.size(); ++i) {
    EXPECT_EQ(byExecuted.contexts[i].name, expected->contexts[i].first);
    EXPECT_NEAR(*byExecuted.contexts[i].baseline, expected->contexts[i].second,
                1e-9 * (1 + expected->contexts[i].second));
  }
}

TEST_F(RegallocScoreOption, AnUnknownScoreIsRefusedBeforeClangRuns) {
  EnvironmentOptions options;
  options.problem = "regalloc";
  options.clang = "/nonexistent/clang"; // Never reached.
  options.problemOptions.regallocScore = "copies";
  auto env = Environment::create(options);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(env.error().message(),
            "regalloc_score: unknown regalloc score 'copies' (expected llvm, instructions or "
            "executed)");
}

} // namespace
} // namespace mlgo::env
