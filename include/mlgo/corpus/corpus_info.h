//===- mlgo/corpus/corpus_info.h - what a corpus holds ----------*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus info DIR`: what a corpus holds and what would keep a
/// module from compiling, found before any episode runs. Unlike
/// Corpus::open, which stops at the first problem, inspectCorpus looks at
/// every module and lists every problem it finds:
///  - a module name that is not a plain relative path, or listed twice;
///  - a `.bc` that is missing, leads outside the corpus, or is not bitcode;
///  - (without an override) a `.cmd` that is missing or does not hold cc1
///    arguments starting with `-cc1`;
///  - (ThinLTO) a `.thinlto.bc` index that is missing or not bitcode, or
///    that is not the summary index of the module's `.bc`;
///  - corpus-wide: no module, an override holding "<UNSPECIFIED>".
/// For a ThinLTO corpus it also counts what the modules imported at the link
/// (ThinLtoImports). Reads each `.cmd` whole and the first bytes of each
/// `.bc`/index, and for ThinLTO each `.bc` and index whole (the `.bc` loaded
/// lazily: its global table, not its function bodies); writes nothing.
/// Thread-compatible (no shared state).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_CORPUS_INFO_H
#define MLGO_CORPUS_CORPUS_INFO_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::corpus {

/// A flag (or `flag value` pair) and how many modules' commands use it.
/// Path-valued flags are shown as `flag …` so they group across modules.
struct FlagUse {
  std::string flag;
  std::size_t modules = 0;
};

/// Something that keeps a module (or, with an empty `module`, the whole
/// corpus) from compiling.
struct CorpusProblem {
  std::string module;
  std::string message;
};

/// ThinLTO: the functions each module took from other modules at the link,
/// as its index records them (corpus/thinlto_imports.h). Modules that import
/// nothing compile as they would without ThinLTO.
struct ThinLtoImports {
  std::size_t modulesCounted = 0; ///< Modules whose `.bc` and index could be read.
  std::size_t importing = 0;      ///< Of those, modules that imported a function.
  std::size_t functions = 0;      ///< Functions imported, summed over the modules.
  std::string mostModule;         ///< The module that imported the most (empty: none).
  std::size_t mostFunctions = 0;
};

struct CorpusInfo {
  std::filesystem::path root;
  std::size_t modules = 0;
  std::uint64_t bitcodeBytes = 0;  ///< Sum over the `.bc` files found.
  std::uint64_t smallestBytes = 0; ///< Of the `.bc` files found.
  std::uint64_t medianBytes = 0;
  std::uint64_t largestBytes = 0;
  std::string smallestModule, largestModule;
  bool hasThinLto = false;
  std::optional<ThinLtoImports> imports; ///< Set when hasThinLto.
  std::optional<std::vector<std::string>> commandOverride;
  std::vector<FlagUse> optimisationLevels; ///< `-O…` arguments, most used first.
  std::vector<FlagUse> targets;            ///< `-triple` values, most used first.
  std::vector<std::string> commonFlags;    ///< In every readable command.
  std::vector<FlagUse> otherFlags;         ///< In some commands only, most used first.
  std::vector<CorpusProblem> problems;     ///< Empty: every module can be compiled.
};

/// Inspects the corpus at `root`. Fails only when there is nothing to
/// inspect: kNotFound for a missing directory or corpus_description.json,
/// kIo / kParse for an unreadable or malformed description.
Result<CorpusInfo> inspectCorpus(const std::filesystem::path& root);

/// A human-readable report; at most `maxListed` entries of each list.
std::string formatCorpusInfo(const CorpusInfo& info, std::size_t maxListed = 20);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_CORPUS_INFO_H
