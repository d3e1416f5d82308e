//===- trace/trace_file.cc - the files a trace run writes -------------------===//
#include "trace_file.h"

#include "context_rewards.h"

#include "mlgo/support/cleanup_scope.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace mlgo::trace {
namespace {

/// Creates `<final>.tmp-<pid>-<n>` exclusively, with the mode an ordinary
/// output file gets (0666 less the umask, applied by the kernel).
Result<std::pair<std::filesystem::path, std::FILE*>> openTemp(support::CleanupScope& scope,
                                                              const std::filesystem::path& final) {
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  auto name = scope.createPath([&]() -> Result<std::filesystem::path> {
    for (int attempt = 0;; ++attempt) {
      std::string candidate = fmt::format("{}.tmp-{}-{}", final.string(), ::getpid(), counter++);
      fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0)
        return std::filesystem::path(candidate);
      if (errno != EEXIST || attempt >= 100)
        return makeError(ErrorCode::kIo, "cannot create {}: {}", candidate, std::strerror(errno));
    }
  });
  if (!name.ok())
    return name.error();
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    int error = errno;
    ::close(fd);
    ::unlink(name->c_str());
    scope.removePath(*name);
    return makeError(ErrorCode::kIo, "cannot open {}: {}", name->string(), std::strerror(error));
  }
  return std::pair{*name, file};
}

Status write(std::FILE* file, std::string_view bytes, const std::filesystem::path& path) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size())
    return makeError(ErrorCode::kIo, "cannot write {}: {}", path.string(), std::strerror(errno));
  return Status::success();
}

} // namespace

Result<TraceFiles> TraceFiles::create(support::CleanupScope& scope,
                                      const std::filesystem::path& trace,
                                      const std::filesystem::path& csv,
                                      std::string_view headerLine) {
  TraceFiles files;
  files.scope_ = &scope;
  files.tracePath_ = trace;
  files.csvPath_ = csv.empty() ? std::filesystem::path(trace.string() + ".csv") : csv;
  if (files.csvPath_ == files.tracePath_)
    return makeError(ErrorCode::kInvalidArgument, "the CSV and the trace are both {}",
                     trace.string());
  auto traceFile = openTemp(scope, trace);
  if (!traceFile.ok())
    return traceFile.error();
  std::tie(files.traceTemp_, files.trace_) = *traceFile;
  auto csvFile = openTemp(scope, files.csvPath_);
  if (!csvFile.ok())
    return csvFile.error(); // `files` removes the trace's temporary file.
  std::tie(files.csvTemp_, files.csv_) = *csvFile;
  MLGO_TRY(write(files.trace_, headerLine, files.traceTemp_));
  MLGO_TRY(write(files.trace_, "\n", files.traceTemp_));
  MLGO_TRY(write(files.csv_, csvHeader(), files.csvTemp_));
  files.bytes_ = headerLine.size() + 1;
  return files;
}

TraceFiles::TraceFiles(TraceFiles&& other) noexcept
    : scope_(other.scope_), tracePath_(std::move(other.tracePath_)),
      csvPath_(std::move(other.csvPath_)), traceTemp_(std::move(other.traceTemp_)),
      csvTemp_(std::move(other.csvTemp_)), trace_(std::exchange(other.trace_, nullptr)),
      csv_(std::exchange(other.csv_, nullptr)), bytes_(other.bytes_) {
  other.traceTemp_.clear();
  other.csvTemp_.clear();
}

TraceFiles::~TraceFiles() {
  discard();
}

void TraceFiles::discard() {
  for (std::FILE** file : {&trace_, &csv_}) {
    if (*file != nullptr)
      std::fclose(*file);
    *file = nullptr;
  }
  for (std::filesystem::path* temp : {&traceTemp_, &csvTemp_}) {
    if (!temp->empty()) {
      ::unlink(temp->c_str());
      scope_->removePath(*temp);
    }
    temp->clear();
  }
}

Status TraceFiles::append(std::string_view records, std::string_view csvRows) {
  MLGO_TRY(write(trace_, records, traceTemp_));
  MLGO_TRY(write(csv_, csvRows, csvTemp_));
  bytes_ += records.size();
  return Status::success();
}

Result<uint64_t> TraceFiles::commit() {
  for (auto [file, temp] : {std::pair{&trace_, &traceTemp_}, std::pair{&csv_, &csvTemp_}}) {
    bool ok = std::fflush(*file) == 0;
    ok = std::fclose(*file) == 0 && ok;
    *file = nullptr;
    if (!ok) {
      Error error =
          makeError(ErrorCode::kIo, "cannot write {}: {}", temp->string(), std::strerror(errno));
      discard();
      return error;
    }
  }
  // Both renames under the scope's lock: an interrupted run
  // never replaces an earlier result with a partial one.
  const std::pair<std::filesystem::path, std::filesystem::path> renames[] = {
      {traceTemp_, tracePath_}, {csvTemp_, csvPath_}};
  Status committed = scope_->commitPaths(renames);
  if (!committed.ok()) {
    discard(); // Removes whichever temporary file is left.
    return committed.error();
  }
  traceTemp_.clear();
  csvTemp_.clear();
  return bytes_;
}

} // namespace mlgo::trace
