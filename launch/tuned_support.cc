//===- launch/tuned_support.cc - a tuned launch's checks and log ------------===//
#include "tuned_support.h"

#include "mlgo/support/subprocess.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace mlgo::launch {
namespace {

/// `program` as execvp would find it, resolved; empty when not found.
std::string resolveProgram(const std::string& program) {
  std::string found;
  if (program.find('/') != std::string::npos) {
    found = program;
  } else if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (found.empty()) {
      size_t colon = rest.find(':');
      std::string dir(rest.substr(0, colon));
      std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0)
        found = candidate;
      if (colon == std::string_view::npos)
        break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (found.empty())
    return {};
  char* real = ::realpath(found.c_str(), nullptr);
  std::string out = real ? real : found;
  std::free(real);
  return out;
}

/// The first line `program --version` prints; empty when it cannot run.
std::string versionOf(const std::string& program, support::CleanupScope& scope) {
  support::SpawnOptions spawn;
  spawn.argv = {program, "--version"};
  auto child = support::Subprocess::spawn(scope, spawn);
  if (!child.ok())
    return {};
  if (!(*child)->waitUntil(support::Clock::now() + std::chrono::seconds(30)).ok())
    return {};
  std::string text = (*child)->outputText();
  return text.substr(0, text.find('\n'));
}

} // namespace

std::string compilerMismatch(const std::string& program, const CompilerStamp& stamp,
                             support::CleanupScope& scope) {
  std::string real = resolveProgram(program);
  struct stat st {};
  if (!real.empty() && real == stamp.path && ::stat(real.c_str(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) == stamp.size &&
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec ==
          stamp.mtimeNs)
    return {};
  std::string version = versionOf(program, scope);
  if (!version.empty() && version == stamp.version)
    return {};
  return fmt::format("the table was made with '{}', this compiler is '{}'", stamp.version,
                     version.empty() ? program : version);
}

std::string appendLog(const TunedLaunch& tuned, const std::string& source,
                      const TunedOutcome& result) {
  if (tuned.log.empty())
    return {};
  bool failedCompile = result.outcome.error || result.outcome.exitCode != 0;
  std::string why = result.outcome.error ? result.outcome.error->message()
                    : failedCompile
                        ? fmt::format("the compiler exited with {}", result.outcome.exitCode)
                        : result.why;
  llvm::json::Object line{{"source", source},
                          {"output", tuned.output},
                          {"outcome", failedCompile     ? "failed"
                                      : result.tuned    ? "tuned"
                                      : result.stale    ? "stale"
                                      : why.empty()     ? "no-decisions"
                                                        : "fallback"},
                          {"module", result.module},
                          {"why", why}};
  if (!tuned.linkedInto.empty())
    line["linked_into"] = tuned.linkedInto;
  if (result.tuned && result.priorityAnswers > 0 && !failedCompile)
    line["priorities"] = static_cast<int64_t>(result.priorityAnswers);
  if (result.stale && !failedCompile) {
    line["from_entry"] = static_cast<int64_t>(result.fromEntry);
    line["decisions"] = static_cast<int64_t>(result.decisions);
  }
  std::string text;
  llvm::raw_string_ostream out(text);
  out << llvm::json::Value(std::move(line)) << "\n";
  out.flush();
  int fd = ::open(tuned.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return fmt::format("cannot write the log '{}': {}", tuned.log.string(), std::strerror(errno));
  ssize_t written = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()))
    return fmt::format("cannot write the log '{}'", tuned.log.string());
  return {};
}

} // namespace mlgo::launch
