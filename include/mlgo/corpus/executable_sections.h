//===- mlgo/corpus/executable_sections.h - code bytes of an object -*- C++ -*-===//
///
/// \file
/// The executable sections of an object file, read in-process with LLVM's
/// object library: ELF relocatable objects, executables and shared libraries
/// (and any other format llvm::object reads). One reader for every user:
/// tuning for size sums their sizes (env/score.h), the inline-replay writer
/// and the tests compare tuned builds by them (bound into Python as
/// `mlgo_env._core.executable_sections`, python/mlgo_env/elf.py).
///
/// A section is executable when llvm::object says it holds text (for ELF:
/// the SHF_EXECINSTR flag). Its contents are the bytes the file holds for it
/// (none for a section that occupies no file space, ELF's SHT_NOBITS).
///
/// Errors (each names the file): kNotFound when there is no such file, kIo
/// when it cannot be read, kParse when it is not an object file or a
/// section's name or bytes lie outside it.
///
/// Thread safety: reentrant; the file is read once and nothing is kept.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_EXECUTABLE_SECTIONS_H
#define MLGO_CORPUS_EXECUTABLE_SECTIONS_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus {

/// One executable section: its name (e.g. ".text", ".text.main") and bytes.
struct ExecutableSection {
  std::string name;
  std::string contents;

  friend bool operator==(const ExecutableSection&, const ExecutableSection&) = default;
};

/// The executable sections of `object`, in the file's section order.
Result<std::vector<ExecutableSection>> readExecutableSections(const std::filesystem::path& object);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_EXECUTABLE_SECTIONS_H
