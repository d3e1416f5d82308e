//===- mlgo/corpus/compile_entry.h - compile_commands.json entries -*- C++ -*-===//
///
/// \file
/// The one reader of compile_commands.json (clang's JSON compilation
/// database): `corpus extract` and `corpus build` take the objects to extract
/// from it, and the inline-replay writer (Python, through `mlgo_env._core`)
/// the command that compiles one module again. Each entry becomes the
/// objects it writes:
///
///  - the command comes from `arguments` (an array) or `command` (one string,
///    split as POSIX sh splits words: quotes and backslashes, no expansions);
///  - `@file` arguments are response files, read relative to the entry's
///    `directory` (nested ones too, as clang-22's driver reads them) and
///    split the same way, recursively (at most kMaxResponseFileDepth levels;
///    a file including itself is an error);
///  - the sources are the words that are not options nor an option's value
///    (`-MF x`, `-include x`, ...) and end in a source extension (`.c`,
///    `.cpp`, `.S`, ...; after `-x LANG`, any such word);
///  - one source: the object is the value of `-o` (`-o x`, `-ox`,
///    `--output=x`, `--output x`), else the entry's optional `output` key,
///    else what clang writes for `-c`: the source's file name with its
///    extension replaced by `.o`, in `directory`;
///  - several sources in one `-c` (no `-o`: clang refuses `-o` with several
///    outputs): one object per source, each named as clang names it. An
///    entry whose `file` key names one of its sources (Bear writes one such
///    entry per source) is that source's compile alone;
///  - relative paths are taken relative to `directory`;
///  - an entry that does not compile to an object (no `-c`, or `-E`, `-S`,
///    `-M`/`-MM`, `-fsyntax-only`, `--analyze`) has no object and is
///    reported.
///
/// recompileArguments() gives the command that compiles one object's source
/// alone, without its outputs: no `-o`, no dependency-file flags (`-MD`
/// `-MMD` `-MP` `-MG` `-MV`, `-MF`/`-MT`/`-MQ`/`-MJ` and their values,
/// `-Wp,-MD,x`, `-Wp,-MMD,x`), no other source. moduleCompiles() names every
/// object as `corpus extract` names it (without --obj_base_dir), so a module
/// of a corpus that `corpus build` wrote finds its compile by its name.
///
/// A malformed database (not JSON, not an array of objects, an entry without
/// `directory`, without `arguments`/`command`) is an error for the whole run;
/// a problem with one entry (an unreadable response file, not a compile) is
/// recorded in that entry so the rest can be used. Pure functions apart from
/// reading response files; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_COMPILE_ENTRY_H
#define MLGO_CORPUS_COMPILE_ENTRY_H

#include "mlgo/corpus/extract.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

inline constexpr int kMaxResponseFileDepth = 16;

/// One object a compile writes.
struct CompiledObject {
  /// Absolute, normalised.
  std::filesystem::path object;
  /// Position in CompileEntry::args of the source compiled into it; 0 when
  /// the command names no source this reader recognises (then its object
  /// came from `-o`, `output` or `file`).
  std::size_t sourceArg = 0;
};

/// One entry of a compilation database.
struct CompileEntry {
  std::size_t index = 0;           ///< Position in the database.
  std::filesystem::path directory; ///< The entry's `directory`, absolute, normalised.
  std::filesystem::path file;      ///< The entry's `file` (may be empty).
  std::vector<std::string> args;   ///< Command words, response files expanded.
  /// The objects written, in the order of their sources; empty when `issue`
  /// is set.
  std::vector<CompiledObject> objects;
  /// Why the entry yields no object (kNoOutputInCommand, or
  /// kBadResponseFile); `object` in the issue is the entry's source file.
  std::optional<ObjectIssue> issue;
};

/// Splits a shell command line into words (whitespace separated; single and
/// double quotes and backslash escapes as in POSIX sh, no expansions).
std::vector<std::string> splitShellWords(std::string_view command);

/// Replaces every `@file` argument of `args` by the words of that file,
/// relative to `directory` (nested ones too), recursively. kNotFound/kIo
/// naming the file when one cannot be read; kInvalidArgument when nesting
/// exceeds kMaxResponseFileDepth (which also catches a file including
/// itself). An `@` alone is kept as an argument.
Result<std::vector<std::string>> expandResponseFiles(std::vector<std::string> args,
                                                     const std::filesystem::path& directory);

/// Positions in `args` (argv[0] is the compiler, never a source) of the
/// source files (see the file comment), in order.
std::vector<std::size_t> sourceArguments(const std::vector<std::string>& args);

/// The objects a compile command writes (see the file comment), relative
/// paths resolved against `directory`; empty with `*why` set when the
/// command is not a compile to an object. `output` is the entry's `output`
/// key, `file` its `file` key (both may be empty).
std::vector<CompiledObject> objectOutputs(const std::vector<std::string>& args,
                                          const std::filesystem::path& directory,
                                          std::string_view output, std::string_view file,
                                          std::string* why);

/// The words of `args` that compile the source at position `sourceArg`
/// alone (0: every source kept), without outputs or dependency files (see
/// the file comment); the caller adds its own `-o` and runs them in the
/// entry's directory.
std::vector<std::string> recompileArguments(const std::vector<std::string>& args,
                                            std::size_t sourceArg);

/// Parses every entry of the database text `json`; `source` names it in
/// messages. kParse for a malformed database (see the file comment).
Result<std::vector<CompileEntry>> parseCompileCommands(std::string_view json,
                                                       std::string_view source);

/// One object of a database, named as `corpus extract` names its module.
struct ModuleCompile {
  std::string module;                 ///< The module name.
  std::filesystem::path object;       ///< Absolute, normalised.
  std::filesystem::path directory;    ///< Where the command runs.
  std::vector<std::string> arguments; ///< recompileArguments() of its source.
  /// An earlier entry writes the same object or gives the same name: extract
  /// keeps the first, so this one is no module of the corpus (still a
  /// compile of the build).
  bool duplicate = false;
};

/// Every object the database text `json` names, in database order (entries
/// that write no object are left out), with the command compiling it alone.
/// kParse as parseCompileCommands.
Result<std::vector<ModuleCompile>> moduleCompiles(std::string_view json, std::string_view source);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_COMPILE_ENTRY_H
