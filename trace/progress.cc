//===- trace/progress.cc - a progress line on a terminal ---------------------===//
#include "mlgo/trace/progress.h"

#include "mlgo/support/cleanup_scope.h"

#include <unistd.h>

namespace mlgo::trace {

TerminalProgress::TerminalProgress(std::FILE* out, const support::CleanupScope* quietAfter)
    : TerminalProgress(out, ::isatty(::fileno(out)) == 1, quietAfter) {}

TerminalProgress::TerminalProgress(std::FILE* out, bool interactive,
                                   const support::CleanupScope* quietAfter)
    : out_(out), interactive_(interactive), quietAfter_(quietAfter) {}

TerminalProgress::~TerminalProgress() {
  clear();
}

void TerminalProgress::started(size_t modules) {
  total_ = modules;
  start_ = std::chrono::steady_clock::now();
  draw("", true);
}

void TerminalProgress::moduleFinished(const std::string& module, uint64_t observations,
                                      const std::string& error) {
  ++done_;
  observations_ += observations;
  if (!error.empty()) {
    ++failed_;
    if (quietAfter_ != nullptr && quietAfter_->cleanupBegan())
      return; // Interrupted: the compiles fail because they were stopped.
    if (interactive_ && drawn_)
      std::fputs("\r\033[K", out_);
    // The first line; the summary at the end has the whole message.
    std::string first = error.substr(0, error.find('\n'));
    std::fprintf(out_, "module %s failed: %s\n", module.c_str(), first.c_str());
    drawn_ = false;
  }
  draw(module, done_ == total_);
}

void TerminalProgress::draw(const std::string& module, bool force) {
  if (!interactive_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - lastDraw_ < std::chrono::milliseconds(100))
    return;
  lastDraw_ = now;
  double seconds = std::chrono::duration<double>(now - start_).count();
  std::string line = fmt::format("\r\033[K[{:>{}}/{}] {} done, {} failed | {} observations | "
                                 "{:.1f} s",
                                 done_, fmt::formatted_size("{}", total_), total_, done_ - failed_,
                                 failed_, observations_, seconds);
  if (!module.empty())
    line += " | " + module;
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  drawn_ = true;
}

void TerminalProgress::clear() {
  if (interactive_ && drawn_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
  drawn_ = false;
}

} // namespace mlgo::trace
