//===- mlgo/env/temp_dir.h - a private temporary directory ------*- C++ -*-===//
///
/// \file
/// A directory created with mkdtemp (mode 0700, unique name) under the
/// system temporary directory ($TMPDIR, else /tmp) or a given parent, removed
/// with everything in it when the owner is destroyed. Every compile gets one:
/// it holds the fifo pair, the object file and the remarks file, so removing
/// it cleans up after a compile however it ended.
///
/// Movable, not copyable. remove() and the destructor never throw.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_TEMP_DIR_H
#define MLGO_ENV_TEMP_DIR_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <string_view>

namespace mlgo::env {

class TempDir {
public:
  /// Creates `<parent>/<prefix>XXXXXX`; an empty parent means the system
  /// temporary directory. kIo naming the path on failure.
  static Result<TempDir> create(std::string_view prefix = "mlgo-env-",
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

private:
  explicit TempDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

} // namespace mlgo::env

#endif // MLGO_ENV_TEMP_DIR_H
