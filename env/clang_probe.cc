//===- env/clang_probe.cc - what a clang can do ----------------------------===//
#include "mlgo/env/clang_probe.h"

#include "mlgo/env/run_compile.h"
#include "mlgo/support/temp_dir.h"

#include <fstream>
#include <iterator>

namespace mlgo::env {
namespace {

/// Calls for the inliner and enough simultaneously live values for the
/// register allocator to evict and to prioritise.
constexpr std::string_view kProbeSource = R"(
static long mix(long a, long b) { return a * 31 + (b ^ (a >> 3)); }
static long fold(const long *p, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s = mix(s, p[i]);
  return s;
}
long probe(long *p, int n) {
  long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i2 = 9, j = 10, k = 11, l = 12,
       m = 13, o = 14, q = 15, r = 16;
  for (int i = 0; i < n; i++) {
    long v = p[i];
    a ^= v * b; b += c * v; c -= d ^ v; d *= e + v; e ^= f << 3; f += g * a; g -= h * b;
    h ^= i2 + c; i2 += j * d; j ^= k - e; k += l * f; l -= m ^ g; m *= o + h; o ^= q * i2;
    q += r * j; r -= a * k;
    if (v & 1) a += fold(p, i);
  }
  return a + b + c + d + e + f + g + h + i2 + j + k + l + m + o + q + r + fold(p, n);
}
)";

} // namespace

Result<ClangVersion> queryClangVersion(support::CleanupScope& scope,
                                       const std::filesystem::path& clang,
                                       std::chrono::milliseconds timeout) {
  CompileCommand command;
  command.argv = {clang.string(), "--version"};
  auto report = runCompile(scope, command, timeout);
  if (!report.ok())
    return report.error().withContext(fmt::format("cannot query clang '{}'", clang.string()));
  ClangVersion version;
  version.path = clang;
  version.fullText = report->output;
  version.version = report->output.substr(0, report->output.find('\n'));
  if (version.version.empty())
    return makeError(ErrorCode::kCompiler, "'{} --version' printed nothing", clang.string());
  return version;
}

Result<CompileCommand> probeCompileCommand(const std::filesystem::path& clang,
                                           const Problem& problem,
                                           const std::filesystem::path& dir) {
  std::filesystem::path source = dir / "probe.c";
  {
    std::ofstream out(source);
    out << kProbeSource;
    if (!out)
      return makeError(ErrorCode::kIo, "cannot write {}", source.string());
  }
  CompileCommand command;
  command.objectPath = dir / "probe.o";
  command.argv = {clang.string(),
                  problem.demoCorpusVariant() == "Oz" ? "-Oz" : "-O2",
                  "-fno-crash-diagnostics",
                  "-c",
                  "-x",
                  "c",
                  source.string(),
                  "-o",
                  command.objectPath.string()};
  command.environment = {"LLVM_DISABLE_SYMBOLIZATION=1"};
  return command;
}

Result<ProblemProbe> probeProblem(support::CleanupScope& scope, const std::filesystem::path& clang,
                                  const Problem& problem,
                                  const ProblemOptions& options,
                                  std::chrono::milliseconds timeout,
                                  const std::filesystem::path& tempParent) {
  auto dir = support::TempDir::create(scope, "mlgo-env-probe-", tempParent);
  if (!dir.ok())
    return dir.error();
  auto built = probeCompileCommand(clang, problem, dir->path());
  if (!built.ok())
    return built.error();
  CompileCommand command = std::move(*built);
  command.channelBase = dir->path() / "channel";
  for (std::string& arg : problem.interactiveArgs(command.channelBase.string(), options))
    command.argv.push_back(std::move(arg));

  SessionLimits limits;
  limits.compileTimeout = timeout;
  limits.scope = &scope;
  auto started = startCompilerSession(std::move(*dir), command, limits);
  if (!started.ok())
    return started.error();
  CompilerSession& session = **started;
  auto unsupported = [&](const Error& error) {
    return Error(error.code() == ErrorCode::kNotFound ? ErrorCode::kNotFound
                                                      : ErrorCode::kUnsupported,
                 fmt::format("clang '{}' cannot run problem '{}': {}", clang.string(),
                             problem.name(), error.message()));
  };
  std::shared_ptr<const BoundProblem> bound;
  std::vector<std::byte> advice;
  Observation observation;
  for (;;) {
    auto event = session.next(observation);
    if (!event.ok())
      return unsupported(event.error());
    if (*event == SessionEvent::kEnd)
      break;
    if (!bound) {
      auto b = problem.bind(*session.header(), options);
      if (!b.ok())
        return unsupported(b.error());
      bound = *b;
      advice.resize(bound->actionSpec().byteSize());
    }
    MLGO_TRY(bound->encode(bound->fallback(observation), advice));
    auto st = session.answer(advice);
    if (!st.ok())
      return unsupported(st.error());
  }
  auto report = session.finish();
  if (!report.ok())
    return unsupported(report.error());
  if (session.header() == nullptr)
    return unsupported(
        makeError(ErrorCode::kUnsupported, "clang never opened the interactive channel"));
  if (!bound) {
    auto b = problem.bind(*session.header(), options);
    if (!b.ok())
      return unsupported(b.error());
  }
  return ProblemProbe{*session.header(), report->observations};
}

std::vector<std::string> parseLlvmOptionList(std::string_view helpText) {
  std::vector<std::string> names;
  while (!helpText.empty()) {
    size_t end = helpText.find('\n');
    std::string_view line = helpText.substr(0, end);
    helpText = end == std::string_view::npos ? std::string_view() : helpText.substr(end + 1);
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos || line[start] != '-')
      continue;
    line.remove_prefix(start);
    line = line.substr(0, line.find_first_of(" \t="));
    while (!line.empty() && line.front() == '-')
      line.remove_prefix(1);
    if (!line.empty())
      names.emplace_back(line);
  }
  return names;
}

Result<std::vector<std::string>> queryLlvmOptions(support::CleanupScope& scope,
                                                  const std::filesystem::path& clang,
                                                  std::chrono::milliseconds timeout,
                                                  const std::filesystem::path& tempParent) {
  // The listing (~400 KB) is longer than the output a compile keeps, so the
  // shell writes it to a file.
  auto dir = support::TempDir::create(scope, "mlgo-env-options-", tempParent);
  if (!dir.ok())
    return dir.error();
  std::filesystem::path listing = dir->path() / "options.txt";
  CompileCommand command;
  command.argv = {"/bin/sh", "-c",
                  "exec \"$0\" -mllvm --help-list-hidden -c -x c /dev/null -o /dev/null > \"$1\"",
                  clang.string(), listing.string()};
  command.environment = {"LLVM_DISABLE_SYMBOLIZATION=1"};
  auto report = runCompile(scope, command, timeout);
  if (!report.ok())
    return report.error().withContext(
        fmt::format("cannot list the LLVM options of clang '{}'", clang.string()));
  std::ifstream in(listing, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail())
    return makeError(ErrorCode::kIo, "cannot read {}", listing.string());
  return parseLlvmOptionList(text);
}

bool offersRegallocIncludeDefault(std::span<const std::string> options) {
  for (const std::string& name : options)
    if (name == kRegallocIncludeDefaultOption)
      return true;
  return false;
}

} // namespace mlgo::env
