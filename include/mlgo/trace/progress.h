//===- mlgo/trace/progress.h - a progress line on a terminal ----*- C++ -*-===//
///
/// \file
/// A TraceListener that keeps one status line up to date on a terminal:
///
///     [ 12/36] 11 done, 1 failed | 48213 observations | 9.8 s | sha256.o
///
/// redrawn at most every 100 ms and erased at the end. When the stream is
/// not a terminal it prints only one line per failed module.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_PROGRESS_H
#define MLGO_TRACE_PROGRESS_H

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/trace/trace_runner.h"

#include <chrono>
#include <cstdio>

namespace mlgo::trace {

class TerminalProgress final : public TraceListener {
public:
  /// `out` is usually stderr; `interactive` defaults to isatty(out). Once
  /// `quietAfter`'s cleanup() began (an interrupted run; null = never),
  /// failed modules are not reported one by one: they failed because their
  /// compilers were stopped. `quietAfter` must outlive the listener.
  explicit TerminalProgress(std::FILE* out, const support::CleanupScope* quietAfter = nullptr);
  TerminalProgress(std::FILE* out, bool interactive,
                   const support::CleanupScope* quietAfter = nullptr);
  ~TerminalProgress() override;

  void started(size_t modules) override;
  void moduleFinished(const std::string& module, uint64_t observations,
                      const std::string& error) override;
  /// Erases the status line.
  void clear();

private:
  void draw(const std::string& module, bool force);

  std::FILE* out_;
  bool interactive_;
  const support::CleanupScope* quietAfter_;
  bool drawn_ = false;
  size_t total_ = 0, done_ = 0, failed_ = 0;
  uint64_t observations_ = 0;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

} // namespace mlgo::trace

#endif // MLGO_TRACE_PROGRESS_H
