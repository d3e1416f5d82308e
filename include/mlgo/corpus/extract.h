//===- mlgo/corpus/extract.h - building a corpus from objects ---*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus extract`: reads the `.llvmbc` (bitcode) and `.llvmcmd`
/// (NUL-separated cc1 arguments) sections that `-Xclang -fembed-bitcode=all`
/// leaves in object files, in-process with llvm::object, and writes them as a
/// corpus (`<name>.bc`, `<name>.cmd`, corpus_description.json). Module names
/// are the object paths relative to their base directory (mlgo-utils'
/// convention, e.g. "lib/parser.c.o").
///
/// Objects that cannot contribute are skipped and reported, never fatal:
/// missing or unreadable files, non-object files, objects without the
/// sections (built without embedding, or from assembly), objects whose
/// bitcode section is empty (`-fembed-bitcode=marker`), and objects built with
/// the DRIVER-level `-fembed-bitcode=all`. The latter embeds the IR after the
/// optimisation pipeline ran (its .llvmcmd is the backend step's command,
/// recognisable by `-disable-llvm-passes`), which is useless for training an
/// optimisation that runs in that pipeline; rebuild with
/// `-Xclang -fembed-bitcode=all`.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_EXTRACT_H
#define MLGO_CORPUS_EXTRACT_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

/// The embedded sections of one object file.
struct EmbeddedModule {
  std::string bitcode; ///< Raw `.llvmbc` bytes (starts with "BC\xC0\xDE").
  std::string command; ///< Raw `.llvmcmd` bytes (NUL-separated cc1 args).
};

/// Why an object contributed nothing.
enum class ObjectProblem {
  kMissing,           ///< The object file does not exist.
  kUnreadable,        ///< It exists but could not be read.
  kNotAnObject,       ///< Not an object file llvm::object understands.
  kNoEmbeddedBitcode, ///< No `.llvmbc`/`.llvmcmd` sections.
  kMarkerOnly,        ///< Empty `.llvmbc` (`-fembed-bitcode=marker`).
  kPostOptimisation,  ///< Driver-level `-fembed-bitcode=all`: optimised IR.
  kBadCommand,        ///< `.llvmcmd` does not start with `-cc1`.
  kFilteredOut,       ///< Did not match `--cmd_filter`.
  kDuplicate,         ///< Same module name as an earlier object.
  kBadName,           ///< Object path escapes the base or output directory.
  kNoOutputInCommand, ///< compile_commands entry that writes no object (not a compile).
  kBadResponseFile,   ///< An `@file` of the entry cannot be read (or nests too deep).
  kNoThinLtoBitcode,  ///< ThinLTO: no `<object>.3.import.bc` (not linked with --save-temps=import).
  kNoThinLtoIndex,    ///< ThinLTO: no `<object>.thinlto.bc` (no --thinlto-emit-index-files).
  kWriteFailed,       ///< Writing the `.bc`/`.cmd` failed.
};
std::string_view objectProblemName(ObjectProblem problem);

/// One object that was skipped, and why (message is user-facing).
struct ObjectIssue {
  std::filesystem::path object;
  ObjectProblem problem;
  std::string message;
};

/// Reads the embedded sections of `object` in-process. The error's message
/// explains the problem (see ObjectProblem); on error, `*problem` (if given)
/// receives its classification. Thread-safe.
Result<EmbeddedModule> readEmbeddedModule(const std::filesystem::path& object,
                                          ObjectProblem* problem = nullptr);

/// mlgo-utils' --thinlto_build.
enum class ThinLtoBuild {
  kNone, ///< Objects carry `.llvmbc`/`.llvmcmd` (-Xclang -fembed-bitcode=all).
  /// An lld ThinLTO link with `-Wl,--save-temps=import
  /// -Wl,--thinlto-emit-index-files` left `<object>.3.import.bc` (the module
  /// after importing) and `<object>.thinlto.bc` (its index) beside each
  /// object. Those become `<name>.bc` and `<name>.thinlto.bc`; there is no
  /// `.cmd`, so the corpus needs `commandOverride` (the flags of the link's
  /// backend compile); without one the description gets the "<UNSPECIFIED>"
  /// placeholder (as mlgo-utils writes it) and a note says to fill it in.
  kLocal,
};

enum class InputType {
  kJson,      ///< A compile_commands.json; objects are what its entries write.
  kDirectory, ///< Every `*.o` (kLocal: `*.3.import.bc`) under a directory.
};

struct ExtractOptions {
  std::filesystem::path input;
  InputType inputType = InputType::kJson;
  std::filesystem::path outputDir;
  /// Base directory object paths are relative to. Default: each JSON entry's
  /// `directory`, or the input directory for kDirectory.
  std::optional<std::filesystem::path> objBaseDir;
  /// ECMAScript regex; a module is kept only if some single cc1 argument
  /// contains a match (mlgo-utils semantics). Unset keeps everything.
  std::optional<std::string> cmdFilter;
  /// Worker threads; 0 means std::thread::hardware_concurrency().
  unsigned numWorkers = 0;
  ThinLtoBuild thinLto = ThinLtoBuild::kNone;
  /// Written as the description's `global_command_override` (clang arguments
  /// every module is compiled with instead of its `.cmd`). Must not contain
  /// "<UNSPECIFIED>".
  std::optional<std::vector<std::string>> commandOverride;
};

struct ExtractSummary {
  std::size_t objects = 0;          ///< Objects considered.
  std::vector<std::string> modules; ///< Extracted module names (input order).
  std::vector<ObjectIssue> skipped; ///< Skipped objects (input order).
  std::uint64_t bitcodeBytes = 0;   ///< Total bitcode written.
  /// What the user should know about the run, one line each: the root that
  /// objects outside their entry's directory were named relative to, an
  /// override placeholder left to fill in.
  std::vector<std::string> notes;
};

/// Progress callback: (objects finished, objects total). Called from worker
/// threads, one call at a time.
using ExtractProgress = std::function<void(std::size_t done, std::size_t total)>;

/// Extracts every object named by `options.input` into `options.outputDir`
/// (created if needed) and writes corpus_description.json listing the
/// extracted modules (has_thinlto true for kLocal, with `commandOverride`
/// as global_command_override). Bad objects are skipped and listed in the
/// summary. Which objects: with kDirectory input every `*.o` file, or for
/// kLocal every `*.3.import.bc` (the object is the name without the
/// suffix); with kJson input see mlgo/corpus/compile_entry.h. Without `objBaseDir`, an
/// object inside its entry's `directory` is named relative to it, the
/// others relative to their common root (reported in `notes`).
/// Fails only for problems with the whole run: unreadable or malformed input
/// (kNotFound/kIo/kParse naming it), an invalid regex, --cmd_filter with
/// kLocal (no command to filter on) or an override containing
/// "<UNSPECIFIED>" (kInvalidArgument), an output directory that cannot be
/// created or the description not written (kIo). Objects are processed by a pool of
/// `numWorkers` threads; the output files of one module are each written
/// atomically (temporary file + rename).
Result<ExtractSummary> extractCorpus(const ExtractOptions& options,
                                     const ExtractProgress& progress = {});

/// Splits a command override given as one string into arguments, as POSIX
/// sh splits words (quotes and backslashes; no expansions).
std::vector<std::string> splitCommandOverride(std::string_view text);

/// Reads a command override from `file` (arguments split as above; newlines
/// separate like spaces). kNotFound/kIo naming the file; kInvalidArgument if
/// it holds no argument.
Result<std::vector<std::string>> readCommandOverride(const std::filesystem::path& file);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_EXTRACT_H
