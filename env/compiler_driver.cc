//===- env/compiler_driver.cc - the real compiler driver ------------------===//
#include "mlgo/env/compiler_driver.h"
#include "mlgo/env/run_compile.h"
#include "mlgo/env/score.h"

namespace mlgo::env {
namespace {

/// Forwards to the process-based functions; holds no state.
class ProcessDriver final : public CompilerDriver {
public:
  Result<ClangVersion> version(support::CleanupScope& scope, const std::filesystem::path& clang,
                               std::chrono::milliseconds timeout) override {
    return queryClangVersion(scope, clang, timeout);
  }

  Result<std::vector<std::string>> llvmOptions(support::CleanupScope& scope,
                                               const std::filesystem::path& clang,
                                               std::chrono::milliseconds timeout,
                                               const std::filesystem::path& tempParent) override {
    return queryLlvmOptions(scope, clang, timeout, tempParent);
  }

  Result<ProblemProbe> probe(support::CleanupScope& scope, const std::filesystem::path& clang,
                             const Problem& problem,
                             const ProblemOptions& options, std::chrono::milliseconds timeout,
                             const std::filesystem::path& tempParent) override {
    return probeProblem(scope, clang, problem, options, timeout, tempParent);
  }

  Result<std::unique_ptr<CompilerSession>>
  startSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits) override {
    return startCompilerSession(std::move(dir), std::move(command), limits);
  }

  Result<CompileReport> runPlain(support::CleanupScope& scope, const CompileCommand& command,
                                 std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                 support::Spawner* spawner,
                                 support::Interrupt* interrupt) override {
    return runCompile(scope, command, timeout, cancel, spawner, interrupt);
  }

  Result<ModuleScore> score(ScoreKind kind, const CompileCommand& command) override {
    return scoreCompile(kind, command);
  }
};

} // namespace

std::shared_ptr<CompilerDriver> processCompilerDriver() {
  return std::make_shared<ProcessDriver>();
}

} // namespace mlgo::env
