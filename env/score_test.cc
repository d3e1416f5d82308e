//===- env/score_test.cc - the regalloc weightings ---------------------------===//
///
/// The two regalloc weightings (score.h), by name and on costs; the kind
/// each score name gives and the arguments each kind asks of clang; and what
/// the planner makes of ProblemOptions::regallocScore: the kind its compiles
/// are scored by, their arguments and the default score's cache key.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/score.h"

#include "compile_plan.h"
#include "mlgo/env/executed_estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace mlgo::env {
namespace {

/// Each cost a distinct power of two, so a wrong weight shows in the sum.
RegallocCosts costs(std::string name, double scale = 1) {
  RegallocCosts c{std::move(name)};
  c.spills = 1 * scale;
  c.reloads = 2 * scale;
  c.foldedSpills = 4 * scale;
  c.foldedReloads = 8 * scale;
  c.copies = 16 * scale;
  return c;
}

TEST(RegallocWeighting, LlvmIsRegAllocScoresAndTheDefault) {
  RegallocCosts c = costs("f");
  double llvm = 4 * (2 + 8) + 1 * (1 + 4) + 0.2 * 16;
  EXPECT_DOUBLE_EQ(c.score(kLlvmWeights), llvm);
  EXPECT_DOUBLE_EQ(c.score(), llvm);
  EXPECT_DOUBLE_EQ(regallocScore({c}).total, llvm);
}

TEST(RegallocWeighting, InstructionsCountsSpillsReloadsCopiesOnceAndFoldedOnesNot) {
  RegallocCosts c = costs("f");
  EXPECT_DOUBLE_EQ(c.score(kInstructionWeights), 1 + 2 + 16);
  // A folded reload unfolded becomes a reload: one instruction more.
  RegallocCosts unfolded = c;
  unfolded.foldedReloads -= 1;
  unfolded.reloads += 1;
  EXPECT_DOUBLE_EQ(unfolded.score(kInstructionWeights) - c.score(kInstructionWeights), 1);
  // ... which LLVM's weighting does not see.
  EXPECT_DOUBLE_EQ(unfolded.score(kLlvmWeights), c.score(kLlvmWeights));
}

TEST(RegallocWeighting, ModuleScoresSumTheirFunctionsInOrder) {
  ModuleScore s = regallocScore({costs("f"), costs("g", 3)}, kInstructionWeights);
  ASSERT_EQ(s.contexts.size(), 2u);
  EXPECT_EQ(s.contexts[0].first, "f");
  EXPECT_DOUBLE_EQ(s.contexts[0].second, 19);
  EXPECT_EQ(s.contexts[1].first, "g");
  EXPECT_DOUBLE_EQ(s.contexts[1].second, 57);
  EXPECT_DOUBLE_EQ(s.total, 76);
}

TEST(RegallocWeighting, NamesPickTheWeightsAndUnknownOnesAreRefused) {
  for (std::string_view name : kRegallocWeightings)
    EXPECT_TRUE(regallocWeights(name).ok()) << name;
  RegallocCosts c = costs("f");
  EXPECT_DOUBLE_EQ(c.score(*regallocWeights("llvm")), c.score(kLlvmWeights));
  EXPECT_DOUBLE_EQ(c.score(*regallocWeights("instructions")), c.score(kInstructionWeights));
  for (std::string_view name : kRegallocScores)
    EXPECT_TRUE(checkRegallocScore(name).ok()) << name;
  EXPECT_FALSE(regallocWeights("executed").ok()) << "not a weighting of the remarks";
  Status unknown = checkRegallocScore("copies");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  auto bad = regallocWeights("LLVM");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "unknown regalloc score 'LLVM' (expected llvm or instructions)");
}

TEST(RegallocScoreKind, EachNameItsKindAndUnknownOnesRefusedNamingTheChoices) {
  EXPECT_EQ(*regallocScoreKind("llvm"), ScoreKind::kRegallocCost);
  EXPECT_EQ(*regallocScoreKind("instructions"), ScoreKind::kRegallocInstructions);
  EXPECT_EQ(*regallocScoreKind("executed"), ScoreKind::kRegallocExecuted);
  auto unknown = regallocScoreKind("copies");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(unknown.error().message(),
            "unknown regalloc score 'copies' (expected llvm, instructions or executed)");
  EXPECT_EQ(checkRegallocScore("copies").error().message(), unknown.error().message());
  // A regalloc problem takes the name's kind; inlining keeps its own.
  for (std::string_view problem : {"regalloc", "regalloc-priority"})
    for (std::string_view name : kRegallocScores)
      EXPECT_EQ(*compileScoreKind(**findProblem(problem), name), *regallocScoreKind(name));
  EXPECT_EQ(*compileScoreKind(**findProblem("inlining"), "executed"), ScoreKind::kTextBytes);
  EXPECT_FALSE(compileScoreKind(**findProblem("inlining"), "copies").ok());
}

TEST(RegallocScoreArgs, RemarksOnlyForTheScoresThatReadThem) {
  for (ScoreKind kind : {ScoreKind::kRegallocCost, ScoreKind::kRegallocInstructions}) {
    EXPECT_TRUE(scoreReadsRemarks(kind));
    EXPECT_THAT(scoreArgs(kind, "/d/r", true),
                ::testing::ElementsAre("-opt-record-file", "/d/r", "-opt-record-passes", "regalloc",
                                       "-opt-record-format", "bitstream"));
    EXPECT_THAT(scoreArgs(kind, "/d/r", false),
                ::testing::Contains("-foptimization-record-file=/d/r"));
  }
  EXPECT_FALSE(scoreReadsRemarks(ScoreKind::kRegallocExecuted));
  EXPECT_FALSE(scoreReadsRemarks(ScoreKind::kTextBytes));
  for (bool cc1 : {true, false}) {
    EXPECT_EQ(scoreArgs(ScoreKind::kRegallocExecuted, "/d/r", cc1), executedScoreArgs(cc1));
    EXPECT_TRUE(scoreArgs(ScoreKind::kTextBytes, "/d/r", cc1).empty());
  }
}

class PlannerScore : public ::testing::Test {
protected:
  void SetUp() override {
    module_.name = "m";
    module_.bitcodePath = "/corpus/m.bc";
    module_.args = {"-cc1", "-O2"};
  }
  CompilePlanner planner(std::string_view problem, std::string score) {
    ProblemOptions options;
    options.regallocScore = std::move(score);
    return CompilePlanner(scope_, **findProblem(problem), "/usr/bin/clang-22", options, {},
                          std::filesystem::temp_directory_path());
  }
  std::vector<std::string> key(const CompilePlanner& p) {
    auto args = p.baselineKeyArgs(module_);
    EXPECT_TRUE(args.ok()) << args.error().message();
    return args.ok() ? *args : std::vector<std::string>{};
  }
  support::CleanupScope scope_;
  corpus::ModuleSpec module_;
};

TEST_F(PlannerScore, InstructionsIsItsOwnKindAndCacheKey) {
  for (std::string_view problem : {"regalloc", "regalloc-priority"}) {
    CompilePlanner llvm = planner(problem, "llvm"), instr = planner(problem, "instructions");
    EXPECT_EQ(llvm.scoreKind(), ScoreKind::kRegallocCost) << problem;
    EXPECT_EQ(instr.scoreKind(), ScoreKind::kRegallocInstructions) << problem;
    EXPECT_NE(key(llvm), key(instr)) << problem;
    EXPECT_EQ(key(llvm), key(planner(problem, "llvm"))) << problem;
    for (const std::string& arg : key(llvm)) // The default's keys are those made before.
      EXPECT_EQ(arg.find("<score"), std::string::npos) << problem;
  }
  // Inlining has no regalloc score: the option changes nothing there.
  CompilePlanner inlining = planner("inlining", "instructions");
  EXPECT_EQ(inlining.scoreKind(), ScoreKind::kTextBytes);
  EXPECT_EQ(key(inlining), key(planner("inlining", "llvm")));
}

/// True when `args` asks clang for optimisation remarks in either spelling.
bool asksForRemarks(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg.starts_with("-opt-record") || arg.find("optimization-record") != std::string::npos;
  });
}

TEST_F(PlannerScore, OnlyTheRemarksScoresAskForRemarks) {
  for (std::string_view problem : {"regalloc", "regalloc-priority"}) {
    for (std::string_view score : kRegallocScores) {
      CompilePlanner p = planner(problem, std::string(score));
      bool reads = score != "executed";
      EXPECT_EQ(asksForRemarks(key(p)), reads) << problem << " " << score;
      for (bool interactive : {false, true}) {
        auto planned = interactive ? p.interactive(module_) : p.baseline(module_);
        ASSERT_TRUE(planned.ok()) << planned.error().message();
        EXPECT_EQ(asksForRemarks(planned->command.argv), reads) << problem << " " << score;
        EXPECT_EQ(planned->command.remarksPath.empty(), !reads) << problem << " " << score;
      }
    }
    CompilePlanner executed = planner(problem, "executed");
    EXPECT_EQ(executed.scoreKind(), ScoreKind::kRegallocExecuted);
    std::vector<std::string> args = key(executed);
    EXPECT_EQ(args.back(), "<score:executed>") << problem;
    for (const std::string& arg : executedScoreArgs(/*cc1=*/true))
      EXPECT_NE(std::find(args.begin(), args.end(), arg), args.end()) << problem << " " << arg;
  }
}

} // namespace
} // namespace mlgo::env
