//===- trace/dev_mode_probe.cc - is this a development-mode clang? ----------===//
#include "trace/dev_mode_probe.h"

#include "mlgo/env/compiler_session.h"
#include "mlgo/env/temp_dir.h"
#include "mlgo/protocol/training_log.h"

#include <fstream>
#include <sstream>

namespace mlgo::trace {
namespace {

/// A call to inline and more simultaneously live values than registers.
constexpr std::string_view kProbeSource = R"(
static long step(long x, long y) { return (x << 5) - x + (y ^ (x >> 7)); }
long probe(const long *v, int n) {
  long r0 = 3, r1 = 5, r2 = 7, r3 = 11, r4 = 13, r5 = 17, r6 = 19, r7 = 23, r8 = 29, r9 = 31,
       r10 = 37, r11 = 41, r12 = 43, r13 = 47, r14 = 53, r15 = 59;
  for (int i = 0; i < n; ++i) {
    long t = v[i];
    r0 += t * r15; r1 ^= r0 + t; r2 -= r1 * t; r3 += r2 ^ t; r4 *= r3 | 1; r5 ^= r4 - t;
    r6 += r5 * r0; r7 -= r6 ^ r1; r8 += r7 * r2; r9 ^= r8 + r3; r10 -= r9 * r4;
    r11 += r10 ^ r5; r12 *= r11 | 1; r13 ^= r12 - r6; r14 += r13 * r7; r15 -= r14 ^ r8;
    r0 = step(r0, t);
  }
  return r0 + r1 + r2 + r3 + r4 + r5 + r6 + r7 + r8 + r9 + r10 + r11 + r12 + r13 + r14 + r15;
}
)";

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

Result<DevelopmentModeProbe> probeDevelopmentMode(const std::filesystem::path& clang,
                                                  const env::Problem& problem,
                                                  std::chrono::milliseconds timeout) {
  auto dir = env::TempDir::create("mlgo-env-devprobe-");
  if (!dir.ok())
    return dir.error();
  std::filesystem::path source = dir->path() / "probe.c";
  std::filesystem::path log = dir->path() / "probe.log";
  {
    std::ofstream out(source);
    out << kProbeSource;
    if (!out)
      return makeError(ErrorCode::kIo, "cannot write {}", source.string());
  }
  env::CompileCommand command;
  command.objectPath = dir->path() / "probe.o";
  command.argv = {clang.string(),
                  problem.demoCorpusVariant() == "Oz" ? "-Oz" : "-O2",
                  "-fno-crash-diagnostics",
                  "-c",
                  "-x",
                  "c",
                  source.string(),
                  "-o",
                  command.objectPath.string()};
  for (std::string& arg : trainingLogArgs(problem, log))
    command.argv.push_back(std::move(arg));
  command.environment = {"LLVM_DISABLE_SYMBOLIZATION=1"};

  DevelopmentModeProbe probe;
  auto report = env::runCompile(command, timeout);
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
