//===- mlgo/env/optimized_ir_cache.h - optimised IR on disk -----*- C++ -*-===//
///
/// \file
/// Register-allocation decisions (eviction, priority) are made in the
/// backend; the IR optimisation pipeline in front of it never depends on
/// them. Episodes of those problems therefore compile a module's optimised
/// IR, made once per module:
///
///   clang <recompile args> -emit-llvm-bc -emit-llvm-uselists -o <key>.bc   once
///   clang <recompile args, input <key>.bc> -disable-llvm-optzns ...        each episode
///
/// which gives the full compile's code byte for byte at about half the cost
/// (docs/clang-facts.md; `-emit-llvm-uselists` matters: use-list order steers
/// codegen). This cache keeps that bitcode, one entry per key:
///
///   <dir>/<key>.bc     the optimised bitcode
///   <dir>/<key>.json   {"format":1,"size":123456,"blake3":"<64 hex>","module":"a/b.o"}
///
/// Key (optimizedIrKey): BLAKE3 of the module's bitcode digest, the
/// optimisation command's arguments (per-compile paths replaced by
/// placeholders, so moving a corpus keeps its entries) and the clang version
/// string: a changed module, flag or compiler never hits a stale entry.
///
/// Validation: load() uses an entry only when its record parses and the
/// bitcode file has the recorded size and BLAKE3 digest. A missing, truncated
/// or altered bitcode, a malformed record or one without its file is a miss
/// (kNotFound / kParse saying which), and the caller builds the entry again;
/// nothing on disk is trusted without its digest.
///
/// Writes: store() copies the bitcode into a uniquely named temporary in the
/// directory (registered in the CleanupScope) and renames it over `<key>.bc`,
/// then does the same for the record. Readers never see a partial file.
/// Several writers of one key (threads, processes, machines sharing the
/// directory) write the same bytes, clang being deterministic; the last
/// rename wins. A reader that catches a bitcode of one writer and the record
/// of another sees a mismatch only if their bytes differ, and rebuilds.
///
/// Bounds: one entry per (module content, arguments, clang version); nothing
/// is evicted. An entry is about the size of the module's optimised bitcode
/// (on the demo and Debian C corpora at -O2, 1-2x the corpus's `.bc`).
/// Removing the directory, or any entry, is safe whenever no mlgo-env is
/// using it (a running one builds again what it misses). A writer killed
/// between creating and renaming its temporary (SIGKILL) leaves a
/// `.<key>.bc.tmp.*` file behind; interruptions it sees remove theirs.
///
/// Thread-safe (no mutable state besides the files).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_OPTIMIZED_IR_CACHE_H
#define MLGO_ENV_OPTIMIZED_IR_CACHE_H

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace mlgo::env {

/// The cache key (64 hex digits) of a module's optimised IR.
std::string optimizedIrKey(std::string_view bitcodeDigest, std::span<const std::string> args,
                           std::string_view clangVersion);

/// A valid entry, as load() or store() found it.
struct OptimizedIrEntry {
  std::filesystem::path bitcode; ///< <dir>/<key>.bc
  std::string digest;            ///< BLAKE3 of its contents.
  /// Which file it was (device, inode, size, mtime): unchanged() compares.
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtimeNs = 0;
};

class OptimizedIrCache {
public:
  /// Uses `dir` (created with its parents if missing). kIo naming the
  /// directory if it cannot be created. Temporaries being written are
  /// registered in `scope`, which must outlive the cache and its copies;
  /// once its cleanup() began, store() fails (kIo).
  static Result<OptimizedIrCache> open(support::CleanupScope& scope, std::filesystem::path dir);

  /// Where the entry for `key` keeps its bitcode.
  std::filesystem::path bitcodePath(std::string_view key) const;
  /// The entry for `key`, validated (file comment; reads the whole bitcode
  /// once). kNotFound when absent; kParse naming what does not match.
  Result<OptimizedIrEntry> load(std::string_view key) const;
  /// Stores a copy of the bitcode file `built` (left in place) as the entry
  /// for `key`, recording `module` for people reading the directory. kIo on
  /// failure (nothing partial is left; an older entry may remain).
  Result<OptimizedIrEntry> store(std::string_view key, const std::filesystem::path& built,
                                 std::string_view module) const;
  /// True when `entry`'s bitcode path still names the file it validated
  /// (one stat): false once it was replaced, rewritten or removed.
  static bool unchanged(const OptimizedIrEntry& entry);

  const std::filesystem::path& dir() const { return dir_; }

private:
  OptimizedIrCache(support::CleanupScope& scope, std::filesystem::path dir)
      : scope_(&scope), dir_(std::move(dir)) {}
  support::CleanupScope* scope_;
  std::filesystem::path dir_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_OPTIMIZED_IR_CACHE_H
