//===- mlgo/env/score.h - measuring a compile -------------------*- C++ -*-===//
///
/// \file
/// Scores of a finished compile, read in-process with LLVM's libraries (no
/// llvm-size or remark tools are spawned). Lower is better for every score.
///
///  - Size: the sum of the sizes of the object's executable sections
///    (SHF_EXECINSTR for ELF; read by mlgo/corpus/executable_sections.h).
///  - Register allocation: from the `regalloc` optimisation remarks clang
///    writes with `-opt-record-file F -opt-record-passes regalloc
///    -opt-record-format bitstream` (driver: `-fsave-optimization-record=
///    bitstream -foptimization-record-passes=regalloc
///    -foptimization-record-file=F`): one `SpillReloadCopies` remark per
///    machine function carrying frequency-weighted costs. A function's score
///    weighs them by one of two RegallocWeights:
///     - kLlvmWeights (`llvm`, the default), LLVM's RegAllocScore:
///         4 * (reloads + folded reloads) + 1 * (spills + folded spills)
///           + 0.2 * copies
///     - kInstructionWeights (`instructions`), an estimate of the executed
///       instructions the allocator added: spills + reloads + copies, each one
///       instruction; folded spills and reloads 0 (a memory operand of an
///       instruction that runs anyway). docs/regalloc.md says why.
///    A function without such a remark (nothing spilled or copied) scores 0.
///    The third regalloc score, `executed`, reads the object instead
///    (executed_estimate.h).
///
/// Which score a compile gets is one ScoreKind (problem.h): the problem's own
/// kind, or for a regalloc problem the one its regalloc score names
/// (compileScoreKind). scoreArgs() gives the arguments a compile needs for
/// that score, scoreCompile() reads the score from its outputs; the episode's
/// planner and the tracer both use them. Only the scores that read the
/// remarks ask clang for them (scoreReadsRemarks).
///
/// Thread safety: the functions are reentrant.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_SCORE_H
#define MLGO_ENV_SCORE_H

#include "mlgo/env/compiler_session.h"
#include "mlgo/env/problem.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::env {

/// How much each frequency-weighted cost counts in a function's score.
struct RegallocWeights {
  double reloads = 0;
  double spills = 0;
  double foldedReloads = 0;
  double foldedSpills = 0;
  double copies = 0;
};

/// LLVM's RegAllocScore (the default, `llvm`).
inline constexpr RegallocWeights kLlvmWeights{
    .reloads = 4.0, .spills = 1.0, .foldedReloads = 4.0, .foldedSpills = 1.0, .copies = 0.2};
/// Executed instructions (`instructions`): a spill, a reload and a copy are
/// one instruction each; a folded one adds none.
inline constexpr RegallocWeights kInstructionWeights{
    .reloads = 1.0, .spills = 1.0, .foldedReloads = 0.0, .foldedSpills = 0.0, .copies = 1.0};

/// The weightings of the remarks by name: "llvm" or "instructions"
/// (kRegallocWeightings lists them); kInvalidArgument naming the choices
/// otherwise.
inline constexpr std::string_view kRegallocWeightings[] = {"llvm", "instructions"};
Result<RegallocWeights> regallocWeights(std::string_view name);

/// Every regalloc score by name: the two weightings of the remarks and
/// "executed", the estimate read from the object (executed_estimate.h).
inline constexpr std::string_view kRegallocScores[] = {"llvm", "instructions", "executed"};
/// Success when `name` is one of kRegallocScores; kInvalidArgument naming
/// the choices otherwise.
Status checkRegallocScore(std::string_view name);
/// The kind regalloc score `name` names: kRegallocCost for "llvm",
/// kRegallocInstructions for "instructions", kRegallocExecuted for
/// "executed"; kInvalidArgument naming kRegallocScores otherwise.
Result<ScoreKind> regallocScoreKind(std::string_view name);

/// Frequency-weighted register allocation costs of one function.
struct RegallocCosts {
  std::string function;
  double spills = 0;
  double reloads = 0;
  double foldedSpills = 0;
  double foldedReloads = 0;
  double copies = 0;

  double score(const RegallocWeights& w = kLlvmWeights) const {
    return w.reloads * reloads + w.foldedReloads * foldedReloads + w.spills * spills +
           w.foldedSpills * foldedSpills + w.copies * copies;
  }
};

/// A compile's score, in total and per context (function), in the order the
/// compiler reported them.
struct ModuleScore {
  double total = 0;
  std::vector<std::pair<std::string, double>> contexts;
};

/// Bytes of executable sections of an object file (the contents of
/// corpus::readExecutableSections, summed). Its errors: kNotFound / kIo /
/// kParse naming the file.
Result<uint64_t> executableSectionBytes(const std::filesystem::path& object);

/// Per-function costs from a bitstream remarks file (functions in file
/// order; a function reported twice has its costs added). kNotFound /
/// kParse naming the file.
Result<std::vector<RegallocCosts>> readRegallocRemarks(const std::filesystem::path& remarks);

/// Sums per-function costs, weighted by `weights`, into a ModuleScore.
ModuleScore regallocScore(const std::vector<RegallocCosts>& costs,
                          const RegallocWeights& weights = kLlvmWeights);

/// 1 - policy/default. When default is 0 the ratio is undefined: the reward
/// is 0 if the policy scores 0 too, else -1.
double relativeReward(double policy, double baseline);

/// What compiles of `problem` are scored by under regalloc score
/// `regallocScore` (ProblemOptions::regallocScore): for a regalloc problem
/// (its own kind kRegallocCost) the kind regallocScoreKind gives, for another
/// problem its own kind. A name not in kRegallocScores is kInvalidArgument
/// whatever the problem.
Result<ScoreKind> compileScoreKind(const Problem& problem, std::string_view regallocScore);

/// True for the scores read from clang's regalloc remarks (kRegallocCost,
/// kRegallocInstructions): their compiles write a remarks file. The others
/// read the object and ask for no remarks.
bool scoreReadsRemarks(ScoreKind kind);

/// The arguments a compile needs, after its recompile arguments, to be
/// scored by `kind`: for a score that reads the remarks, those that write
/// them to `remarks` (file comment); for kRegallocExecuted,
/// executedScoreArgs() (executed_estimate.h); none for kTextBytes. `remarks`
/// is used by the remarks scores only. `cc1` selects cc1 spellings,
/// otherwise driver spellings.
std::vector<std::string> scoreArgs(ScoreKind kind, const std::filesystem::path& remarks, bool cc1);

/// The score of a finished compile, compiled with scoreArgs(kind, ...): the
/// bytes of its object's executable sections (kTextBytes), the remarks at
/// `command.remarksPath` weighed by kLlvmWeights or kInstructionWeights, or
/// executedEstimate() of its object. The errors are the reader's, naming the
/// file.
Result<ModuleScore> scoreCompile(ScoreKind kind, const CompileCommand& command);

} // namespace mlgo::env

#endif // MLGO_ENV_SCORE_H
