//===- mlgo/env/baseline_cache.h - default scores on disk -------*- C++ -*-===//
///
/// \file
/// The default-heuristic score of a module (a plain compile with the same
/// flags) is computed once and kept on disk, one small JSON file per key:
///
///   <dir>/<key>.json   {"format":1,"total":1234,"contexts":[["f",12.5],...]}
///
/// The key is a BLAKE3 hash of the module's bitcode, the final compile
/// arguments (with the per-compile output paths and the bitcode path
/// replaced by placeholders) and the clang version string, so a changed
/// module, flag or compiler never hits a stale entry, and moving a corpus
/// does not invalidate it. Writers write a uniquely named temporary file in
/// the same directory and rename it over the entry, so concurrent writers
/// (threads, processes, machines sharing a directory) never expose a partial
/// file; readers treat an unreadable or malformed entry as a miss.
///
/// Thread-safe (no mutable state besides the files).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_BASELINE_CACHE_H
#define MLGO_ENV_BASELINE_CACHE_H

#include "mlgo/env/score.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mlgo::env {

/// BLAKE3 of a file's contents, as 64 hex digits. kNotFound / kIo.
Result<std::string> fileDigest(const std::filesystem::path& path);

/// The cache key (64 hex digits) for a compile.
std::string baselineKey(std::string_view bitcodeDigest, std::span<const std::string> args,
                        std::string_view clangVersion);

class BaselineCache {
public:
  /// $XDG_CACHE_HOME/mlgo-env, else $HOME/.cache/mlgo-env, else
  /// <system temp>/mlgo-env-cache.
  static std::filesystem::path defaultDir();

  /// Uses `dir` (created with its parents if missing); empty = defaultDir().
  /// kIo naming the directory if it cannot be created. Entries being written
  /// are registered in `scope` (cleanup_scope.h), which must outlive the
  /// cache and its copies; once its cleanup() began, store() fails (kIo).
  static Result<BaselineCache> open(support::CleanupScope& scope, std::filesystem::path dir);

  /// The entry for `key`, or nullopt when absent or unreadable.
  std::optional<ModuleScore> load(std::string_view key) const;
  /// Writes the entry atomically (kIo on failure; the cache stays valid).
  Status store(std::string_view key, const ModuleScore& score) const;

  const std::filesystem::path& dir() const { return dir_; }

private:
  BaselineCache(support::CleanupScope& scope, std::filesystem::path dir)
      : scope_(&scope), dir_(std::move(dir)) {}
  support::CleanupScope* scope_;
  std::filesystem::path dir_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_BASELINE_CACHE_H
