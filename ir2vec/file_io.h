//===- ir2vec/file_io.h - whole-file reads and atomic writes ----*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: small file helpers that turn std::filesystem and
/// stream failures into Result errors naming the file.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_FILE_IO_H
#define MLGO_IR2VEC_FILE_IO_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace mlgo::ir2vec::detail {

/// The whole content of `path`. kNotFound when it does not exist, kIo when it
/// cannot be read (or is a directory).
Result<std::string> readFile(const std::filesystem::path& path);

/// Writes `content` to a unique temporary file beside `path`, then renames it
/// over `path`, so readers never see a partial file. Removes the temporary on
/// failure. kIo on any failure.
Status writeFileAtomically(const std::filesystem::path& path, std::string_view content);

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_FILE_IO_H
