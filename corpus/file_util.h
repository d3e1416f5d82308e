//===- corpus/file_util.h - small file helpers for the corpus layer -*- C++ -*-===//
///
/// \file
/// File reading/writing and path-containment checks that turn
/// std::filesystem exceptions and errno into Result errors naming the path.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_FILE_UTIL_H
#define MLGO_CORPUS_FILE_UTIL_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace mlgo::corpus::detail {

/// Whole contents of `path`. kNotFound if missing, kIo if unreadable or a
/// directory; `what` (e.g. "module command file") prefixes the message.
Result<std::string> readFile(const std::filesystem::path& path, std::string_view what);

/// Writes `contents` to `path` (parent directories created), replacing it
/// atomically via a unique temporary file in the same directory. kIo on failure.
Status writeFileAtomic(const std::filesystem::path& path, std::string_view contents);

/// Whether `name` is a safe relative module name: non-empty, not absolute, no
/// `..` or `.` component, no empty component, no NUL. Purely lexical.
bool isSafeRelativeName(std::string_view name);

/// Whether `path`, with symlinks resolved as far as it exists, lies inside
/// the canonical directory `root`. Never throws.
bool resolvesInside(const std::filesystem::path& root, const std::filesystem::path& path);

} // namespace mlgo::corpus::detail

#endif // MLGO_CORPUS_FILE_UTIL_H
