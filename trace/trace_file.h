//===- trace/trace_file.h - the files a trace run writes ---------*- C++ -*-===//
///
/// \file
/// The trace and its CSV, written to temporary files beside their final
/// names (mkstemp, same directory) and renamed over them by commit(), so a
/// reader never sees a half-written trace under the final name and an
/// interrupted run leaves the previous files in place. Destroying an
/// uncommitted TraceFiles removes the temporary files.
///
/// Not thread-safe; the runner serialises appends.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_FILE_H
#define MLGO_TRACE_TRACE_FILE_H

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/result.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace mlgo::trace {

class TraceFiles {
public:
  /// Opens the temporary files and writes the header line (plus newline)
  /// and the CSV header. `csv` empty = `<trace>.csv`. kIo naming the path.
  /// The temporary files are registered in `scope`, which must outlive the
  /// TraceFiles; once its cleanup() began, commit() fails (kIo) and renames
  /// nothing.
  static Result<TraceFiles> create(support::CleanupScope& scope, const std::filesystem::path& trace,
                                   const std::filesystem::path& csv, std::string_view headerLine);

  TraceFiles(TraceFiles&& other) noexcept;
  TraceFiles& operator=(TraceFiles&&) = delete;
  TraceFiles(const TraceFiles&) = delete;
  ~TraceFiles();

  /// Appends one module's records and CSV rows. kIo on a write error.
  Status append(std::string_view records, std::string_view csvRows);
  /// Flushes, closes and renames both files into place; returns the
  /// trace's size in bytes.
  Result<uint64_t> commit();

  const std::filesystem::path& csvPath() const { return csvPath_; }

private:
  TraceFiles() = default;
  void discard();

  support::CleanupScope* scope_ = nullptr;
  std::filesystem::path tracePath_, csvPath_;
  std::filesystem::path traceTemp_, csvTemp_;
  std::FILE* trace_ = nullptr;
  std::FILE* csv_ = nullptr;
  uint64_t bytes_ = 0;
};

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRACE_FILE_H
