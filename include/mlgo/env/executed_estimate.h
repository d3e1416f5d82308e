//===- mlgo/env/executed_estimate.h - instructions an object executes -*- C++ -*-===//
///
/// \file
/// The `executed` regalloc score: an estimate, read from the object itself,
/// of how many instructions the module's code executes. Unlike the scores
/// from clang's regalloc remarks (score.h), it sees everything the allocator
/// leaves in the code: spills, reloads and copies, but also rematerialised
/// instructions, callee-saved saves and restores, and the calls between
/// functions (each function weighed by how often the profile says it runs).
///
/// The compile adds executedScoreArgs(): clang then writes, per machine
/// function, its basic blocks' offsets and sizes and their frequencies
/// relative to the function's entry (SHT_LLVM_BB_ADDR_MAP with its PGO
/// analyses) and the profile's entry count of the function. The estimate is
///
///     sum over functions f of  w(f) * sum over blocks b of f of
///                                  freq(b) / freq(entry of f) * insns(b)
///
/// where insns(b) is the number of instructions in the block's bytes (LLVM's
/// disassembler for the object's target; alignment padding lies between
/// blocks and is not counted) and w(f) is f's profile entry count. A module
/// none of whose functions has an entry count (no profile, or a profile that
/// never ran the module) weighs each function 1: the sum over functions of
/// the instructions one call executes. The frequencies are the compiler's
/// (from the profile's branch weights where there is one), so the estimate's
/// scale is not what a run executes; its differences between compiles of one
/// module are what the score is for (docs/regalloc.md measures how well they
/// follow a workload's).
///
/// The entry block is the first block of the function's first range. A
/// function split into several ranges (-fsplit-machine-functions,
/// basic-block sections) is refused: its other ranges lie in other sections,
/// placed by relocations this reader does not follow.
///
/// Errors (each names the file, and the function where there is one):
/// kNotFound / kIo when the object cannot be read; kParse when it is not an
/// ELF object, has code but no block map with frequencies (compiled without
/// executedScoreArgs()), a function's entry block has frequency 0, or a
/// block's bytes do not decode; kUnsupported for a split function or a target
/// LLVM has no disassembler for.
///
/// Thread safety: reentrant (LLVM's native target is registered once per
/// process, by support::ensureNativeTargets()).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_EXECUTED_ESTIMATE_H
#define MLGO_ENV_EXECUTED_ESTIMATE_H

#include "mlgo/env/score.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::env {

/// The compile arguments that make clang record what the estimate reads;
/// `cc1` selects cc1 spellings (the same words: both take
/// `-fbasic-block-address-map` and `-mllvm`).
std::vector<std::string> executedScoreArgs(bool cc1);

/// The estimate for `object`, in total and per function (in the file's
/// order); 0 for an object without code.
Result<ModuleScore> executedEstimate(const std::filesystem::path& object);

} // namespace mlgo::env

#endif // MLGO_ENV_EXECUTED_ESTIMATE_H
