//===- env/compile_plan.h - the commands of an episode ----------*- C++ -*-===//
///
/// \file
/// Private to env/: builds the interactive and baseline compile commands of
/// a corpus module for a problem; score.h's scoreCompile scores their
/// outputs.
///
/// Both commands are `<clang> <recompile args> <score args>` (score.h's
/// scoreArgs for the planner's scoreKind()), the interactive one with the
/// problem's `-mllvm` flags after that, each in a fresh private directory
/// (object `out.o`, fifos `channel.in/.out`, and remarks `remarks.opt` when
/// the score reads them). cc1 commands get no `-fno-crash-diagnostics` (cc1
/// rejects it and never writes crash reproducers); driver commands do. Every
/// compile runs with LLVM_DISABLE_SYMBOLIZATION=1, so a crash does not spend
/// seconds symbolising its stack.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_COMPILE_PLAN_H
#define MLGO_ENV_COMPILE_PLAN_H

#include "mlgo/corpus/command_line.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/fixed_priorities.h"
#include "mlgo/env/problem.h"
#include "mlgo/env/score.h"

namespace mlgo::env {

struct PlannedCompile {
  support::TempDir dir;
  CompileCommand command;
};

class CompilePlanner {
public:
  /// Per-compile directories are registered in `scope`, which must outlive
  /// the planner and every PlannedCompile.
  CompilePlanner(support::CleanupScope& scope, const Problem& problem, std::filesystem::path clang,
                 ProblemOptions options, corpus::FlagRules rules, std::filesystem::path tempParent)
      : scope_(&scope), problem_(&problem), clang_(std::move(clang)), options_(std::move(options)),
        rules_(std::move(rules)), tempParent_(std::move(tempParent)) {}

  Result<PlannedCompile> interactive(const corpus::ModuleSpec& module) const;
  Result<PlannedCompile> baseline(const corpus::ModuleSpec& module) const;
  /// The baseline's arguments with the per-compile paths and the bitcode
  /// path replaced by placeholders: what the cache key hashes.
  Result<std::vector<std::string>> baselineKeyArgs(const corpus::ModuleSpec& module) const;
  /// The plain compile writing `module`'s optimised IR (optimized_ir_cache.h)
  /// into its directory as `opt.bc` (CompileCommand::objectPath): the
  /// recompile arguments plus `-emit-llvm-bc -emit-llvm-uselists`, without
  /// the problem's flags. For cc1 commands only (kInvalidArgument otherwise).
  Result<PlannedCompile> optimization(const corpus::ModuleSpec& module) const;
  /// Its arguments with the output and bitcode paths as placeholders.
  Result<std::vector<std::string>> optimizationKeyArgs(const corpus::ModuleSpec& module) const;

  /// regalloc: interactive compiles of the modules `priorities` lists also
  /// open clang's priority channel (CompileCommand::extraChannels[0], the
  /// `regalloc-priority` problem's flags); fixed_priorities.h. Call before
  /// the planner is shared.
  void setFixedPriorities(std::shared_ptr<const FixedPriorities> priorities) {
    priorities_ = std::move(priorities);
  }
  const FixedPriorities* fixedPriorities() const { return priorities_.get(); }

  const Problem& problem() const { return *problem_; }
  /// What its compiles are scored by: score.h's compileScoreKind of the
  /// problem and the options' regallocScore. Whoever makes the planner checks
  /// that name first (checkRegallocScore; environment creation does); an
  /// unknown one scores as the problem's own kind.
  ScoreKind scoreKind() const;
  support::CleanupScope& scope() const { return *scope_; }

private:
  Result<std::vector<std::string>> baseArgs(const corpus::ModuleSpec& module,
                                            const std::filesystem::path& object,
                                            const std::filesystem::path& remarks) const;
  Result<PlannedCompile> plan(const corpus::ModuleSpec& module, bool interactive) const;
  /// Opens clang's priority channel on `base` beside the problem's.
  void addPriorityChannel(CompileCommand& command, const std::filesystem::path& base) const;
  Result<std::vector<std::string>> optimizationArgs(const corpus::ModuleSpec& module,
                                                    const std::filesystem::path& output) const;

  support::CleanupScope* scope_;
  const Problem* problem_;
  std::filesystem::path clang_;
  ProblemOptions options_;
  corpus::FlagRules rules_;
  std::shared_ptr<const FixedPriorities> priorities_;
  std::filesystem::path tempParent_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_COMPILE_PLAN_H
