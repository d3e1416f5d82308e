//===- trace/dev_mode_probe.cc - is this a development-mode clang? ----------===//
#include "dev_mode_probe.h"

#include "mlgo/env/clang_probe.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/run_compile.h"
#include "mlgo/protocol/training_log.h"
#include "mlgo/support/temp_dir.h"

#include <fstream>
#include <sstream>

namespace mlgo::trace {
namespace {

/// The first non-empty line, without clang's "  Try: ..." advice.
std::string firstLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos)
      continue;
    line = line.substr(start);
    if (size_t tip = line.find("  Try:"); tip != std::string::npos)
      line.resize(tip);
    return line;
  }
  return "no output";
}

} // namespace

std::vector<std::string> trainingLogArgs(const env::Problem& problem,
                                         const std::filesystem::path& logFile) {
  std::string log = logFile.string();
  if (problem.name() == "inlining")
    return {"-mllvm", "-enable-ml-inliner=development", "-mllvm", "-training-log=" + log};
  if (problem.name() == "regalloc")
    return {"-mllvm", "-regalloc-enable-advisor=development", "-mllvm",
            "-regalloc-training-log=" + log};
  return {"-mllvm", "-regalloc-enable-priority-advisor=development", "-mllvm",
          "-regalloc-priority-training-log=" + log};
}

Result<DevelopmentModeProbe> probeDevelopmentMode(support::CleanupScope& scope,
                                                  const std::filesystem::path& clang,
                                                  const env::Problem& problem,
                                                  std::chrono::milliseconds timeout) {
  auto dir = support::TempDir::create(scope, "mlgo-env-devprobe-");
  if (!dir.ok())
    return dir.error();
  std::filesystem::path log = dir->path() / "probe.log";
  auto built = env::probeCompileCommand(clang, problem, dir->path());
  if (!built.ok())
    return built.error();
  env::CompileCommand command = std::move(*built);
  for (std::string& arg : trainingLogArgs(problem, log))
    command.argv.push_back(std::move(arg));

  DevelopmentModeProbe probe;
  auto report = env::runCompile(scope, command, timeout);
  if (!report.ok()) {
    if (report.error().code() == ErrorCode::kNotFound)
      return report.error();
    // The message is a first line saying how clang ended, then clang's
    // output: keep clang's first complaint.
    const std::string& message = report.error().message();
    size_t newline = message.find('\n');
    probe.detail = newline == std::string::npos ? message : firstLine(message.substr(newline + 1));
    return probe;
  }
  std::ifstream in(log, std::ios::binary);
  std::string header;
  if (!in || !std::getline(in, header)) {
    probe.detail = "clang accepted the options but wrote no training log";
    return probe;
  }
  auto parsed = protocol::LogHeader::fromJson(header);
  if (!parsed.ok()) {
    probe.detail = "clang wrote an unreadable training log: " + parsed.error().message();
    return probe;
  }
  probe.supported = true;
  probe.detail = header;
  probe.header = std::move(*parsed);
  return probe;
}

} // namespace mlgo::trace
