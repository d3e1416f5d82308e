//===- mlgo/support/llvm_targets.h - LLVM's native target, once -*- C++ -*-===//
///
/// \file
/// LLVM keeps the targets it knows in one registry per process, and
/// registering one is not thread-safe. Every layer that needs the host's
/// target (ir2vec's optimisation pipeline, env's disassembler) registers it
/// through ensureNativeTargets(), whose one flag (an inline function's static
/// is one object across the program) makes the registration happen once,
/// whichever thread asks first. Header-only: only code that links LLVM
/// includes it.
///
/// Thread safety: callable from any thread; blocks until the registration
/// is done.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_LLVM_TARGETS_H
#define MLGO_SUPPORT_LLVM_TARGETS_H

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace mlgo::support {

/// Registers the host's target, its machine code layer and its disassembler
/// with LLVM, once per process.
inline void ensureNativeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetDisassembler();
  });
}

} // namespace mlgo::support

#endif // MLGO_SUPPORT_LLVM_TARGETS_H
