//===- env/run_compile.cc - plain compiles and shared helpers ---------------===//
#include "mlgo/env/run_compile.h"

#include "compile_util.h"

namespace mlgo::env {
namespace detail {

std::chrono::nanoseconds cpuTime(const struct rusage& usage) {
  auto tv = [](const timeval& t) {
    return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
  };
  return std::chrono::duration_cast<std::chrono::nanoseconds>(tv(usage.ru_utime) +
                                                              tv(usage.ru_stime));
}

std::string programName(const CompileCommand& command) {
  return command.argv.empty() ? std::string("compiler") : command.argv[0];
}

Status checkExit(const CompileCommand& command, const support::Subprocess& process,
                 const std::string& output) {
  const support::ExitStatus& exit = *process.exitStatus();
  if (!exit.success())
    return makeError(ErrorCode::kCompiler, "{} {}{}", programName(command), exit.describe(),
                     outputExcerpt(output));
  std::error_code ec;
  if (!command.objectPath.empty() && !std::filesystem::exists(command.objectPath, ec))
    return makeError(ErrorCode::kCompiler, "{} exited with code 0 but wrote no object file {}{}",
                     programName(command), command.objectPath.string(), outputExcerpt(output));
  return Status::success();
}

} // namespace detail

using detail::checkExit;
using detail::cpuTime;
using detail::programName;
using std::chrono::milliseconds;

namespace {

/// Kills and reaps the compile's process group, then removes what it may
/// have half written.
void killCompile(support::Subprocess& process, const CompileCommand& command) {
  process.kill();
  std::error_code ec;
  if (!command.objectPath.empty())
    std::filesystem::remove(command.objectPath, ec);
}

} // namespace

Result<CompileReport> runCompile(support::CleanupScope& scope, const CompileCommand& command,
                                 milliseconds timeout, const std::atomic<bool>* cancel,
                                 support::Spawner* spawner, support::Interrupt* interrupt) {
  auto started = support::Clock::now();
  auto spawned = support::Subprocess::spawn(scope, {command.argv, command.environment, spawner});
  if (!spawned.ok())
    return spawned.error();
  support::Subprocess& process = **spawned;
  support::Deadline limit = started + timeout;
  // With a cancel flag, wake up every few milliseconds to look at it; with
  // an armed interrupt, at least every slice to ask it.
  for (;;) {
    support::Deadline until =
        cancel != nullptr ? std::min(limit, support::Clock::now() + milliseconds(20)) : limit;
    if (interrupt != nullptr)
      until = interrupt->slice(until);
    auto st = process.waitUntil(until);
    if (st.ok())
      break;
    if (cancel != nullptr && cancel->load()) {
      killCompile(process, command);
      return makeError(ErrorCode::kInternal, "compile of {} cancelled",
                       command.objectPath.string());
    }
    if (interrupt != nullptr && interrupt->requested()) {
      killCompile(process, command);
      return makeError(ErrorCode::kInterrupted, "{} interrupted while compiling; killed",
                       programName(command));
    }
    if (support::Clock::now() >= limit) {
      killCompile(process, command);
      return makeError(ErrorCode::kTimeout, "{} did not finish within {} ms; killed",
                       programName(command), timeout.count());
    }
  }
  CompileReport report;
  report.exit = *process.exitStatus();
  report.output = process.outputText();
  MLGO_TRY(checkExit(command, process, report.output));
  report.wallTime = support::Clock::now() - started;
  report.compilerTime = report.wallTime;
  report.compilerCpu = cpuTime(process.usage());
  return report;
}

std::string outputExcerpt(const std::string& output, size_t maxLines) {
  constexpr size_t kMaxLineChars = 300;
  std::vector<std::string_view> lines;
  std::string_view rest(output);
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos)
      lines.push_back(line.substr(0, kMaxLineChars));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  if (lines.empty())
    return "";
  std::string result = "; its output:";
  auto add = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      result += fmt::format("\n    {}", lines[i]);
  };
  if (lines.size() <= maxLines) {
    add(0, lines.size());
  } else {
    // The first lines name the error, the last ones end a crash report.
    add(0, maxLines / 2);
    result += fmt::format("\n    [... {} lines ...]", lines.size() - maxLines);
    add(lines.size() - (maxLines - maxLines / 2), lines.size());
  }
  return result;
}

} // namespace mlgo::env
