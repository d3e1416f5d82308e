//===- env/cache_files.h - what the on-disk caches share --------*- C++ -*-===//
///
/// \file
/// Private to env/: the pieces the baseline cache (baseline_cache.h) and the
/// optimised-IR cache (optimized_ir_cache.h) both use: BLAKE3 keys over
/// length-prefixed fields, file digests together with the identity of the
/// file that was read, and atomic writes (a uniquely named temporary in the
/// cache directory, registered in a CleanupScope, renamed over the entry).
///
/// Thread-safe (no shared state besides a counter).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_CACHE_FILES_H
#define MLGO_ENV_CACHE_FILES_H

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mlgo::env::detail {

/// Hashes length-prefixed fields, so ("ab","c") and ("a","bc") differ.
class KeyHasher {
public:
  /// Starts with `tag` (what is keyed, and its format version).
  explicit KeyHasher(std::string_view tag);
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;
  void add(std::string_view field);
  /// 64 hex digits.
  std::string finish();

private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Which file a path named when it was read: a rename over the path (a new
/// entry) or a rewrite in place changes it.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtimeNs = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

/// The identity of what `path` names now (follows symlinks). kNotFound / kIo.
Result<FileIdentity> identityOf(const std::filesystem::path& path);

struct FileDigest {
  std::string digest;    ///< BLAKE3, 64 hex digits.
  FileIdentity identity; ///< Of the file that was read (fstat on its descriptor).
};
/// BLAKE3 of a file's contents. kNotFound / kIo naming the path.
Result<FileDigest> digestFile(const std::filesystem::path& path);

/// Digests of files by path, computed again only when what the path names
/// changes (identityOf: one stat per call otherwise). Thread-safe; holds one
/// entry per path it was asked about.
class DigestMemo {
public:
  /// BLAKE3 of the file's contents (64 hex digits). kNotFound / kIo.
  Result<std::string> digest(const std::filesystem::path& path);

private:
  std::mutex mutex_;
  std::unordered_map<std::string, FileDigest> known_;
};

/// Appends to a compile's cache-key arguments `args` the content of each
/// profile they name (`-fprofile-instrument-use-path=F`,
/// `-fprofile-sample-use=F`, `-fprofile-remapping-file=F`; a relative F is
/// the compile's, relative to the working directory) as
/// `<content of FLAG>=<BLAKE3>` (`=unreadable` when it cannot be read: then
/// the compile either fails or does not read it). The path alone would let a
/// profile rewritten in place hit the entry of the old one: an IR-level
/// profile (`-fprofile-generate`) is read again by every recompile.
void addProfileContents(std::vector<std::string>& args, DigestMemo& memo);

/// Creates `<dir>/.<stem>.tmp.<pid>.<n>.<random>` exclusively, registered in
/// `scope` (kIo once its cleanup began, or naming the path).
Result<std::filesystem::path> createTemporary(support::CleanupScope& scope,
                                              const std::filesystem::path& dir,
                                              std::string_view stem);
/// Removes a registered temporary and unregisters it.
void discardTemporary(support::CleanupScope& scope, const std::filesystem::path& temp);
/// Writes `text` into a new temporary for `final` (in final's directory).
/// The caller commits it (scope.commitPaths) or discards it.
Result<std::filesystem::path> writeTemporary(support::CleanupScope& scope,
                                             const std::filesystem::path& final,
                                             std::string_view text);
/// Renames each temporary over its final path, in order (scope.commitPaths);
/// on failure, discards the temporaries not renamed yet.
Status commitAll(support::CleanupScope& scope,
                 std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames);

} // namespace mlgo::env::detail

#endif // MLGO_ENV_CACHE_FILES_H
