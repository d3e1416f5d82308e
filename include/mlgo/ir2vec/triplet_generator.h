//===- mlgo/ir2vec/triplet_generator.h - triplets from bitcode --*- C++ -*-===//
///
/// \file
/// Generates IR2Vec training triplets (triplets.h) from bitcode modules, in
/// process, the way LLVM's mlgo-utils generator does with `opt -O<n> |
/// llvm-ir2vec triplets`: each module is parsed, optimised with the new pass
/// manager's default pipeline at several levels (each level starts from the
/// original IR), and the triplets of every resulting module are collected.
/// The result is de-duplicated and sorted, so it does not depend on the
/// order or the number of threads.
///
/// Modules are processed in parallel, one LLVMContext per module. When a
/// module's target is known to LLVM, the pipeline runs with that target's
/// TargetMachine (as opt does); otherwise without one.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_TRIPLET_GENERATOR_H
#define MLGO_IR2VEC_TRIPLET_GENERATOR_H

#include "mlgo/ir2vec/triplets.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::ir2vec {

/// An optimisation pipeline level: O0, O1, O2, O3, Os or Oz.
enum class OptLevel { kO0, kO1, kO2, kO3, kOs, kOz };

/// "O0".."Oz".
std::string_view optLevelName(OptLevel level);
/// Parses "O0".."Oz" (a leading '-' is accepted); kInvalidArgument otherwise.
Result<OptLevel> parseOptLevel(std::string_view text);
/// Parses a comma-separated list such as "O0,O2,Oz"; duplicates are dropped.
Result<std::vector<OptLevel>> parseOptLevels(std::string_view text);

struct TripletOptions {
  /// Pipelines to run on each module (LLVM's generator chooses among all six).
  std::vector<OptLevel> levels = {OptLevel::kO0, OptLevel::kO1, OptLevel::kO2,
                                  OptLevel::kO3, OptLevel::kOs, OptLevel::kOz};
  /// Adds (cmp opcode, predicate, Predicate) triplets. Off = exactly LLVM 22's
  /// triplets.
  bool includePredicates = true;
  /// Worker threads; 0 = one per hardware thread.
  unsigned jobs = 0;
  /// Called after each module (from worker threads, serialised): modules
  /// done so far, total, and the module's path.
  std::function<void(size_t done, size_t total, const std::filesystem::path& module)> progress;
};

/// Triplets of all `modules` (bitcode or textual IR files). Fails with the
/// first module that cannot be read or parsed (kNotFound / kParse, naming
/// it); kInvalidArgument when `modules` or `options.levels` is empty.
Result<TripletSet> generateTriplets(const std::vector<std::filesystem::path>& modules,
                                    const TripletOptions& options);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_TRIPLET_GENERATOR_H
