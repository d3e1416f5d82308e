//===- ir2vec/triplet_generator.cc - triplets from bitcode ----------------===//
#include "mlgo/ir2vec/triplet_generator.h"

#include "file_io.h"
#include "ir_module.h"
#include "parallel.h"

#include "mlgo/ir2vec/entities.h"
#include "mlgo/support/llvm_targets.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/IR2Vec.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <mutex>

namespace mlgo::ir2vec {
namespace {

using LlvmVocabulary = llvm::ir2vec::Vocabulary;

// Predicate triplets get their relation id once the largest operand count
// of the whole corpus is known.
constexpr uint32_t kPredicatePlaceholder = UINT32_MAX;

struct ModuleTriplets {
  std::vector<Triplet> triplets; // sorted, unique
  uint32_t maxArgs = 0;
};

/// Appends the triplets of every defined function of `module`.
void collectTriplets(const llvm::Module& module, bool withPredicates, ModuleTriplets& out) {
  for (const llvm::Function& function : module.getFunctionDefs()) {
    bool hasPrevious = false;
    uint32_t previous = 0;
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& inst : block.instructionsWithoutDebug()) {
        uint32_t opcode = LlvmVocabulary::getIndex(inst.getOpcode());
        if (hasPrevious)
          out.triplets.push_back({previous, opcode, kNextRelation});
        out.triplets.push_back(
            {opcode, LlvmVocabulary::getIndex(inst.getType()->getTypeID()), kTypeRelation});
        uint32_t arg = 0;
        for (const llvm::Use& use : inst.operands())
          out.triplets.push_back(
              {opcode, LlvmVocabulary::getIndex(*use.get()), kFirstArgRelation + arg++});
        out.maxArgs = std::max(out.maxArgs, arg);
        if (const auto* cmp = llvm::dyn_cast<llvm::CmpInst>(&inst); cmp && withPredicates)
          out.triplets.push_back(
              {opcode, LlvmVocabulary::getIndex(cmp->getPredicate()), kPredicatePlaceholder});
        previous = opcode;
        hasPrevious = true;
      }
    }
  }
}

void sortUnique(std::vector<Triplet>& triplets) {
  std::sort(triplets.begin(), triplets.end());
  triplets.erase(std::unique(triplets.begin(), triplets.end()), triplets.end());
}

llvm::OptimizationLevel llvmLevel(OptLevel level) {
  switch (level) {
  case OptLevel::kO0:
    return llvm::OptimizationLevel::O0;
  case OptLevel::kO1:
    return llvm::OptimizationLevel::O1;
  case OptLevel::kO2:
    return llvm::OptimizationLevel::O2;
  case OptLevel::kO3:
    return llvm::OptimizationLevel::O3;
  case OptLevel::kOs:
    return llvm::OptimizationLevel::Os;
  case OptLevel::kOz:
    return llvm::OptimizationLevel::Oz;
  }
  return llvm::OptimizationLevel::O0;
}

/// The module's TargetMachine when LLVM knows its target (null otherwise).
std::unique_ptr<llvm::TargetMachine> targetMachineFor(const llvm::Module& module) {
  support::ensureNativeTargets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(module.getTargetTriple(), error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      module.getTargetTriple(), "", "", llvm::TargetOptions(), std::nullopt));
}

/// Runs the default pipeline of `level` on `module` with the new pass manager,
/// configured like `opt -O<n>`.
void optimize(llvm::Module& module, OptLevel level, llvm::TargetMachine* machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  // As `opt -O<n>` does in LLVM 22: both vectorizers on for O2, O3 and Os,
  // off for O0, O1 and Oz (checked against opt's output triplet for triplet).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization =
      llvmLevel(level).getSpeedupLevel() > 1 && llvmLevel(level).getSizeLevel() < 2;
  tuning.SLPVectorization = tuning.LoopVectorization;
  llvm::PassBuilder builder(machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline = level == OptLevel::kO0
                                         ? builder.buildO0DefaultPipeline(llvmLevel(level))
                                         : builder.buildPerModuleDefaultPipeline(llvmLevel(level));
  pipeline.run(module, modules);
}

Result<ModuleTriplets> moduleTriplets(const std::filesystem::path& path,
                                      const TripletOptions& options) {
  Result<std::string> content = detail::readFile(path);
  if (!content)
    return std::move(content).error();
  ModuleTriplets result;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine;
  for (OptLevel level : options.levels) {
    // Every level starts from the original IR.
    Result<std::unique_ptr<llvm::Module>> module =
        detail::parseModule(*content, path.string(), context);
    if (!module)
      return std::move(module).error();
    if (!machine)
      machine = targetMachineFor(**module);
    optimize(**module, level, machine.get());
    collectTriplets(**module, options.includePredicates, result);
    sortUnique(result.triplets);
  }
  return result;
}

} // namespace

std::string_view optLevelName(OptLevel level) {
  static constexpr std::string_view kNames[] = {"O0", "O1", "O2", "O3", "Os", "Oz"};
  return kNames[static_cast<size_t>(level)];
}

Result<OptLevel> parseOptLevel(std::string_view text) {
  std::string_view name = text.starts_with('-') ? text.substr(1) : text;
  for (OptLevel level :
       {OptLevel::kO0, OptLevel::kO1, OptLevel::kO2, OptLevel::kO3, OptLevel::kOs, OptLevel::kOz})
    if (optLevelName(level) == name)
      return level;
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown optimisation level '{}' (expected O0, O1, O2, O3, Os or Oz)", text);
}

Result<std::vector<OptLevel>> parseOptLevels(std::string_view text) {
  std::vector<OptLevel> levels;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    Result<OptLevel> level = parseOptLevel(item);
    if (!level)
      return std::move(level).error();
    if (std::find(levels.begin(), levels.end(), *level) == levels.end())
      levels.push_back(*level);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (levels.empty())
    return makeError(ErrorCode::kInvalidArgument, "no optimisation levels given");
  return levels;
}

Result<TripletSet> generateTriplets(const std::vector<std::filesystem::path>& modules,
                                    const TripletOptions& options) {
  if (modules.empty())
    return makeError(ErrorCode::kInvalidArgument, "no modules to generate triplets from");
  if (options.levels.empty())
    return makeError(ErrorCode::kInvalidArgument, "no optimisation levels to run");
  entityNames(); // Build the entity table before the workers start.

  std::vector<ModuleTriplets> perModule(modules.size());
  std::mutex progressMutex;
  size_t done = 0;
  Status status = detail::parallelFor(modules.size(), options.jobs, [&](size_t i) -> Status {
    Result<ModuleTriplets> result = moduleTriplets(modules[i], options);
    if (!result)
      return std::move(result).error();
    perModule[i] = std::move(*result);
    if (options.progress) {
      std::lock_guard lock(progressMutex);
      options.progress(++done, modules.size(), modules[i]);
    }
    return Status::success();
  });
  if (!status)
    return status.error();

  TripletSet set;
  uint32_t maxArgs = 0;
  for (ModuleTriplets& m : perModule) {
    maxArgs = std::max(maxArgs, m.maxArgs);
    set.triplets.insert(set.triplets.end(), m.triplets.begin(), m.triplets.end());
    m.triplets = {};
  }
  uint32_t predicateRelation = kFirstArgRelation + maxArgs;
  for (Triplet& t : set.triplets)
    if (t.relation == kPredicatePlaceholder)
      t.relation = predicateRelation;
  sortUnique(set.triplets);
  set.entities = entityNames();
  set.relations = relationNames(maxArgs, options.includePredicates);
  return set;
}

} // namespace mlgo::ir2vec
