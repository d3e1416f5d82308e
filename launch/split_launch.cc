//===- launch/split_launch.cc - a compiler call taken apart -----------------===//
#include "mlgo/launch/split_launch.h"

#include "mlgo/launch/split_call.h"
#include "mlgo/support/subprocess.h"
#include "mlgo/support/temp_dir.h"

#include <chrono>
#include <optional>

namespace mlgo::launch {
namespace {

/// Runs the link `argv` (its output `output`, for messages) to its end.
Result<int> runLink(std::vector<std::string> argv, const std::string& output,
                    support::CleanupScope& scope) {
  support::SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.inheritOutput = true;
  auto child = support::Subprocess::spawn(scope, spawn);
  if (!child.ok())
    return child.error().withContext("the link of " + output);
  for (;;) {
    Status waited = (*child)->waitUntil(support::Clock::now() + std::chrono::hours(1));
    if (waited.ok())
      break;
    if (waited.error().code() != ErrorCode::kTimeout) {
      (*child)->kill();
      return waited.error().withContext("the link of " + output);
    }
  }
  const support::ExitStatus& exit = *(*child)->exitStatus();
  if (!exit.exited)
    return makeError(ErrorCode::kIo, "the link of {}: the compiler was {}", output,
                     exit.describe());
  return exit.code;
}

} // namespace

Result<int> runSplit(const LaunchOptions& options, const CallKind& kind,
                     const CompileAlone& compile, support::CleanupScope& scope) {
  std::span<const std::string> args(options.command.begin() + 1, options.command.end());
  std::optional<support::TempDir> dir;
  if (kind.link) {
    auto made = support::TempDir::create(scope, "mlgo-env-launch-", options.tempDir);
    if (!made.ok())
      return made.error().withContext("the objects of " + linkOutput(kind));
    dir.emplace(std::move(*made));
  }
  std::vector<std::string> objects;
  int code = 0;
  for (size_t k = 0; k < kind.sources.size(); ++k) {
    const std::string& source = args[kind.sources[k]];
    std::string module = objectName(source);
    // Two sources of one name in other directories get objects of their own.
    objects.push_back(kind.link ? (dir->path() / fmt::format("{}-{}", k, module)).string()
                                : module);
    LaunchOptions one = options;
    one.command.resize(1);
    for (std::string& arg : compileAlone(args, kind, k, objects.back()))
      one.command.push_back(std::move(arg));
    int exit = compile(one, source, module);
    if (scope.cleanupBegan())
      return exit;
    if (code == 0)
      code = exit;
  }
  if (code != 0 || !kind.link)
    return code;
  std::vector<std::string> link = linkWith(args, kind, objects);
  link.insert(link.begin(), options.command[0]);
  return runLink(std::move(link), linkOutput(kind), scope);
}

} // namespace mlgo::launch
