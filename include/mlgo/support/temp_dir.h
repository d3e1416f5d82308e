//===- mlgo/support/temp_dir.h - a private temporary directory --*- C++ -*-===//
///
/// \file
/// A directory created with mkdtemp (mode 0700, unique name) under the
/// system temporary directory ($TMPDIR, else /tmp) or a given parent, removed
/// with everything in it when the owner is destroyed. Every compile gets one:
/// it holds the fifo pair, the object file and the remarks file, so removing
/// it cleans up after a compile however it ended.
///
/// Names carry their owner: `<prefix><pid>.<starttime>-XXXXXX`, the pid and
/// the start time (clock ticks after boot, /proc/<pid>/stat) of the process
/// that made it, so a pid recycled since is not mistaken for the owner. A
/// host that died without cleaning up (SIGKILL, a crash) leaves its
/// directories behind; reapOrphans() removes those whose owner is gone, and
/// Environment::create() runs it on its temporary root.
///
/// Every TempDir is registered in the CleanupScope it was created in
/// (cleanup_scope.h), so an interrupted run removes it; the scope must
/// outlive the TempDir.
///
/// Movable, not copyable. remove() and the destructor never throw.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_TEMP_DIR_H
#define MLGO_SUPPORT_TEMP_DIR_H

#include "mlgo/support/result.h"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mlgo::support {

class CleanupScope;

class TempDir {
public:
  /// Creates `<parent>/<prefix><pid>.<starttime>-XXXXXX`; an empty parent
  /// means the system temporary directory. kIo naming the path on failure.
  /// Prefixes should start with kNamePrefix (reapOrphans looks at those).
  /// Registered in `scope` (kIo once its cleanup() began).
  static Result<TempDir> create(CleanupScope& scope, std::string_view prefix = "mlgo-env-",
                                const std::filesystem::path& parent = {});

  TempDir() = default;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }
  bool valid() const { return !path_.empty(); }
  /// Removes the directory and its contents now (idempotent).
  void remove();

  /// The directory temporary files go to: $TMPDIR if set, else /tmp.
  static std::filesystem::path systemTempDir();

  /// What every name reapOrphans() looks at starts with.
  static constexpr std::string_view kNamePrefix = "mlgo-env-";
  /// Removes every directory `<parent>/mlgo-env-...<pid>.<starttime>-XXXXXX`
  /// of ours (same uid, not a symlink) whose owner process is gone (no such
  /// pid, or one started at another time). Empty parent = the system
  /// temporary directory. Returns how many it removed; never fails (what
  /// it cannot remove stays).
  static size_t reapOrphans(const std::filesystem::path& parent = {});

  /// The process that made a directory, from its name.
  struct Owner {
    pid_t pid = 0;
    uint64_t startTime = 0;
  };
  /// Parses `...<pid>.<starttime>-XXXXXX`; nullopt for other names.
  static std::optional<Owner> ownerOf(std::string_view name);
  /// True when that process still runs (same pid and start time).
  static bool ownerAlive(const Owner& owner);
  /// This process's `<pid>.<starttime>`.
  static std::string ownerTag();

private:
  TempDir(CleanupScope& scope, std::filesystem::path path)
      : scope_(&scope), path_(std::move(path)) {}
  CleanupScope* scope_ = nullptr; ///< Where path_ is registered.
  std::filesystem::path path_;
};

} // namespace mlgo::support

#endif // MLGO_SUPPORT_TEMP_DIR_H
