//===- mlgo/env/problem.h - the optimisation problems -----------*- C++ -*-===//
///
/// \file
/// The registry of problems mlgo-env hosts. A Problem knows the compiler
/// flags that make clang ask its questions, how its score is measured, and,
/// once bound to the header clang actually sent (`bind`), which features the
/// agent sees, which actions are valid and what the fallback policy answers.
///
///  - inlining: inline this call site? Valid: 0 or 1. Fallback: clang's own
///    decision (`inlining_default`).
///  - regalloc (eviction): which live range to evict. Valid: an index i with
///    mask[i] == 1. Default decision and fallback: clang's own default when
///    the clang offers it (ProblemOptions::regallocClangDefault), else the
///    host's emulation of the default advisor (mlgo/policy/default_eviction.h).
///  - regalloc-priority: the priority of a live range. Valid: finite and in
///    [0, 2^32) once rounded to the advice's float type. Fallback: one of
///    kPriorityFallbacks (default `weight`).
///
/// Feature and advice specs are never hard-coded: they come from clang's
/// header; bind() checks only what the rules above rely on (the advice type
/// and shape, and the `mask` / `inlining_default` features) and says plainly
/// what it found instead when they are missing.
///
/// Problems are immutable and thread-safe; BoundProblem too.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_PROBLEM_H
#define MLGO_ENV_PROBLEM_H

#include "mlgo/env/compiler_session.h"
#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlgo::env {

/// An agent's answer: an integer or a floating-point number (JSON numbers
/// map to whichever they are written as).
using ActionValue = std::variant<int64_t, double>;

/// "3", "0.5".
std::string formatAction(const ActionValue& action);

/// How a problem scores a compile (lower is better for both).
enum class ScoreKind : uint8_t {
  kTextBytes,    ///< Bytes of executable sections of the object file.
  kRegallocCost, ///< 4*reloads + 1*spills + 0.2*copies from regalloc remarks.
  /// spills + reloads + copies from regalloc remarks, folded ones 0: what a
  /// regalloc problem scores with under ProblemOptions::regallocScore
  /// "instructions" (score.h's compileScoreKind); no Problem reports it.
  kRegallocInstructions,
  /// The instructions the object's code is estimated to execute
  /// (executed_estimate.h): what a regalloc problem scores with under
  /// ProblemOptions::regallocScore "executed"; no Problem reports it.
  kRegallocExecuted,
};

struct ProblemOptions {
  /// inlining: show `inlining_default` to the agent as the last feature (it
  /// is always reported in the step info).
  bool includeDefaultFeature = false;
  /// inlining: value of -ml-advisor-size-increase-threshold; high enough that
  /// clang keeps asking on big modules, so answering the default reproduces
  /// a plain compile.
  double sizeIncreaseThreshold = 100.0;
  /// regalloc-priority: what the fallback policy answers, from the three
  /// features (li_size, stage, weight), which cannot reproduce clang's
  /// default priority (it also uses whether the range is local to a block,
  /// its start, hints and the register class's priority). One of
  /// kPriorityFallbacks; bench/priority_fallbacks.py measures them.
  std::string priorityFallback = "weight";
  /// regalloc problems: what a compile is scored by, one of score.h's
  /// kRegallocScores: `llvm` (LLVM's RegAllocScore, the default) or
  /// `instructions` (an estimate of the executed instructions the spills,
  /// reloads and copies add), both from clang's remarks, or `executed` (the
  /// instructions the object's code is estimated to execute, from its block
  /// map: executed_estimate.h). Part of the default score's cache key. Other
  /// problems ignore it.
  std::string regallocScore = "llvm";
  /// regalloc-priority: the answer of the `constant` fallback.
  double constantPriority = 1.0;
  /// regalloc: clang accepts `-regalloc-evict-interactive-include-default`
  /// (found by probeRegallocIncludeDefault): it is passed, and clang's own
  /// default decision (the feature whose name contains "default") becomes
  /// the default decision and fallback instead of the host emulation. The
  /// feature is shown to the agent only with includeDefaultFeature.
  bool regallocClangDefault = false;
  /// inlining: an IR2Vec vocabulary (absolute path; empty = off). clang then
  /// adds the features `callee_embedding` and `caller_embedding` (float
  /// [dimension]) to every observation; see ir2vec::inlinerVocabularyFlags.
  /// The other problems have no IR2Vec features in LLVM 22 and ignore it.
  std::filesystem::path ir2vecVocabulary;
  /// inlining: the vocabulary's dimension; bind() checks that both embedding
  /// features have it (0 = not checked).
  unsigned ir2vecDimension = 0;
};

/// The regalloc-priority fallbacks: `constant` (constantPriority),
/// `li_size`, `weight` (weight x 1000), `stage` (1, or 0 for a range clang
/// deferred after failing to assign it: stage 2, RS_Split), `stage-then-size`
/// (2^23 + li_size/2, or li_size/2 alone for stage 2). Sizes and weights are
/// clamped to [0, 2^24), where float32 is exact.
inline constexpr std::string_view kPriorityFallbacks[] = {"constant", "li_size", "weight",
                                                          "stage", "stage-then-size"};

/// A problem bound to one header: the rules for its observations.
class BoundProblem {
public:
  virtual ~BoundProblem() = default;

  const protocol::LogHeader& header() const { return header_; }
  /// Indices into header().features of the features the agent sees.
  std::span<const size_t> visibleFeatures() const { return visible_; }
  /// The advice tensor (what an action becomes on the wire).
  const protocol::TensorSpec& actionSpec() const { return *header_.advice; }

  /// Checks `action` against this observation. kInvalidArgument with a
  /// message naming the rule it broke.
  virtual Status validate(const Observation& observation, const ActionValue& action) const = 0;
  /// Encodes a validated action into `out` (actionSpec().byteSize() bytes).
  Status encode(const ActionValue& action, std::span<std::byte> out) const;
  /// What the fallback policy answers to this observation (always valid).
  virtual ActionValue fallback(const Observation& observation) const = 0;
  /// clang's own default decision, when the stream carries it.
  virtual std::optional<ActionValue> defaultDecision(const Observation&) const {
    return std::nullopt;
  }
  /// fallback(observation) for a caller that already has
  /// defaultDecision(observation): a problem whose fallback starts from the
  /// default decision does not compute it twice (the step's hot path).
  virtual ActionValue fallbackKnowingDefault(const Observation& observation,
                                             const std::optional<ActionValue>&) const {
    return fallback(observation);
  }
  /// Where defaultDecision() comes from: `clang-default:<feature>` (clang
  /// reports it), `host-emulation-v2:default-eviction` (the host computes
  /// it), or empty (no default decision).
  virtual std::string defaultDecisionSource() const { return {}; }
  /// One-line description of the valid actions, for `describe`.
  virtual std::string actionRule() const = 0;

protected:
  BoundProblem(protocol::LogHeader header, std::vector<size_t> visible)
      : header_(std::move(header)), visible_(std::move(visible)) {}

private:
  protocol::LogHeader header_;
  std::vector<size_t> visible_;
};

class Problem {
public:
  virtual ~Problem() = default;

  /// "inlining", "regalloc", "regalloc-priority".
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  /// The demo corpus variant the problem trains on by default ("Oz", "O2").
  virtual std::string_view demoCorpusVariant() const = 0;
  virtual ScoreKind scoreKind() const = 0;
  /// True when every decision is made after the IR optimisation pipeline
  /// (in codegen), which then never depends on them: episodes may compile
  /// a module's cached optimised IR (optimized_ir_cache.h). The register
  /// allocation problems; not inlining (the inliner is in that pipeline).
  virtual bool decidesInCodegen() const { return false; }

  /// Arguments making clang ask over channel `channelBase` (each option is
  /// preceded by `-mllvm`).
  virtual std::vector<std::string> interactiveArgs(const std::string& channelBase,
                                                   const ProblemOptions& options) const = 0;
  /// Checks that clang's header fits this problem and returns the rules
  /// for its observations. kUnsupported saying what is missing or different.
  virtual Result<std::shared_ptr<const BoundProblem>> bind(const protocol::LogHeader& header,
                                                           const ProblemOptions& options) const = 0;

  /// "1 - policy/default of executable-section bytes" and the like; for the
  /// regalloc problems, of the score `regallocScore` names.
  std::string rewardDefinition(std::string_view regallocScore = "llvm") const;
};

/// Every problem, in a stable order.
std::span<const Problem* const> allProblems();
/// The problem called `name`; kInvalidArgument listing the valid names.
Result<const Problem*> findProblem(std::string_view name);

} // namespace mlgo::env

#endif // MLGO_ENV_PROBLEM_H
