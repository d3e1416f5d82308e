//===- mlgo/corpus/corpus.h - a training corpus on disk ---------*- C++ -*-===//
///
/// \file
/// A corpus is a directory laid out by LLVM's mlgo-utils conventions:
///
///   <root>/corpus_description.json
///       {"modules": ["a.o", "lib/b.o"], "has_thinlto": false,
///        "global_command_override": ["-cc1", "-O2", ...]}   // optional
///   <root>/<module>.bc          pre-optimisation IR of each module
///   <root>/<module>.cmd         NUL-separated cc1 arguments, starting with -cc1
///                               (not read when global_command_override is set)
///   <root>/<module>.thinlto.bc  ThinLTO index (only when has_thinlto)
///
/// `Corpus::open` validates the whole corpus eagerly: every module name must be
/// relative and stay inside the root (no `..`, no absolute names, no symlink
/// leading out), every `.bc` must exist (its size is recorded), every `.cmd`
/// must parse. A `Corpus` is immutable after `open` and safe to share between
/// threads.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_CORPUS_H
#define MLGO_CORPUS_CORPUS_H

#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mlgo::corpus {

/// One module of a corpus, as `Corpus::open` found it.
struct ModuleSpec {
  /// The name listed in corpus_description.json (relative, no extension,
  /// e.g. "lib/parser.o"). Unique within a corpus.
  std::string name;
  /// Absolute path of `<root>/<name>.bc`.
  std::filesystem::path bitcodePath;
  /// The cc1 arguments the module was compiled with: the `.cmd` file split on
  /// NUL with empty entries dropped (first element `-cc1`), or the corpus's
  /// `global_command_override` verbatim. Not yet rewritten for recompilation;
  /// see `recompileArgs` in command_line.h.
  std::vector<std::string> args;
  /// True when `args` came from `global_command_override`.
  bool argsFromOverride = false;
  /// Absolute path of `<root>/<name>.thinlto.bc` when the corpus has ThinLTO.
  std::optional<std::filesystem::path> thinLtoIndexPath;
  /// Size of the `.bc` file in bytes (what the size-stratified sampler uses).
  std::uint64_t bitcodeSize = 0;
};

/// A validated, read-only corpus.
class Corpus {
public:
  /// Reads and validates `<root>/corpus_description.json` and every module's
  /// files. Errors (each names the file or module at fault):
  ///  - kNotFound: root, corpus_description.json, a `.bc`, `.cmd` or
  ///    `.thinlto.bc` file does not exist;
  ///  - kIo: a file exists but cannot be read;
  ///  - kParse: malformed JSON, missing/mistyped keys, empty `modules`,
  ///    duplicate module names, a `.cmd` that does not start with `-cc1`, a
  ///    `global_command_override` with an argument holding the "<UNSPECIFIED>" placeholder
  ///    (the message says to fill it in);
  ///  - kInvalidArgument: a module name that is empty, absolute, contains `..`
  ///    or resolves (through symlinks) outside the root. Nothing outside the
  ///    root is read.
  /// Modules keep the order of the description file.
  static Result<Corpus> open(const std::filesystem::path& root);

  /// All modules, in description order. Never empty.
  const std::vector<ModuleSpec>& modules() const { return modules_; }

  /// The module called `name`, or kNotFound naming it and the corpus. The
  /// pointer stays valid as long as this Corpus (never null on success).
  Result<const ModuleSpec*> find(std::string_view name) const;

  /// The corpus directory, absolute and canonical.
  const std::filesystem::path& root() const { return root_; }

  /// Whether modules carry ThinLTO indices (`has_thinlto`).
  bool hasThinLto() const { return hasThinLto_; }

  /// Whether the corpus supplies `global_command_override`.
  bool hasGlobalCommandOverride() const { return hasOverride_; }

  /// Sum of all modules' bitcode sizes, in bytes.
  std::uint64_t totalBitcodeBytes() const;

private:
  Corpus() = default;

  std::filesystem::path root_;
  std::vector<ModuleSpec> modules_;
  std::unordered_map<std::string, std::size_t> index_; ///< name -> position in modules_
  bool hasThinLto_ = false;
  bool hasOverride_ = false;
};

/// The bundled demo corpus built with the project for an optimisation variant:
/// `"Oz"` (what inlining-for-size trains on) or `"O2"` (register allocation).
/// Returns the build-tree directory compiled into the library
/// (`<build>/corpus/demo-Oz` or `<build>/corpus/demo-O2`); it exists once the
/// build has made target mlgo_demo_corpus (sources: data/demo_corpus/). kInvalidArgument for any other variant.
/// Does not touch the file system.
Result<std::filesystem::path> defaultDemoCorpusDir(std::string_view variant);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_CORPUS_H
