//===- launch/thinlto_jobs.cc - lld's ThinLTO backend jobs, run -------------===//
#include "mlgo/launch/thinlto_jobs.h"

#include "mlgo/support/subprocess.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <memory>

namespace mlgo::launch {
namespace {

Error bad(const std::filesystem::path& file, const std::string& what) {
  return makeError(ErrorCode::kInvalidArgument, "ThinLTO job file '{}': {}", file.string(),
                   what);
}

/// The strings of `array`; false when it is missing or holds anything else.
bool strings(const llvm::json::Array* array, std::vector<std::string>& out) {
  if (!array)
    return false;
  for (const auto& v : *array) {
    auto s = v.getAsString();
    if (!s)
      return false;
    out.push_back(s->str());
  }
  return true;
}

} // namespace

Result<std::vector<ThinLtoJob>> readThinLtoJobs(const std::filesystem::path& file) {
  auto text = llvm::MemoryBuffer::getFile(file.string(), /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!text)
    return makeError(ErrorCode::kIo, "ThinLTO job file '{}': cannot be read: {}", file.string(),
                     text.getError().message());
  auto value = llvm::json::parse((*text)->getBuffer());
  if (!value)
    return bad(file, "not JSON: " + llvm::toString(value.takeError()));
  const auto* root = value->getAsObject();
  const auto* common = root ? root->getObject("common") : nullptr;
  const auto* jobs = root ? root->getArray("jobs") : nullptr;
  std::vector<std::string> prefix;
  if (!common || !jobs || !strings(common->getArray("args"), prefix) || prefix.empty())
    return bad(file, "needs common.args (the compiler first) and a jobs list");
  std::vector<ThinLtoJob> out;
  for (const auto& job : *jobs) {
    ThinLtoJob j{prefix, {}};
    const auto* object = job.getAsObject();
    if (!object || !strings(object->getArray("args"), j.command))
      return bad(file, "a job without an args list of strings");
    if (object->getArray("outputs") && !strings(object->getArray("outputs"), j.outputs))
      return bad(file, "a job whose outputs are not strings");
    out.push_back(std::move(j));
  }
  return out;
}

Status runThinLtoJobs(const std::filesystem::path& file, unsigned parallel,
                      support::CleanupScope& scope) {
  auto jobs = readThinLtoJobs(file);
  if (!jobs.ok())
    return jobs.error();
  parallel = std::clamp(parallel, 1u, 8u); // waitReadable watches at most 8
  struct Running {
    std::unique_ptr<support::Subprocess> child;
    std::string label;
    std::vector<std::string> outputs;
  };
  std::vector<Running> running;
  std::optional<Error> failure;
  auto reapOne = [&] {
    for (;;) {
      for (size_t i = 0; i < running.size(); ++i) {
        if (!running[i].child->tryReap())
          continue;
        const auto& exit = *running[i].child->exitStatus();
        if (!exit.success() && !failure)
          failure = makeError(ErrorCode::kIo, "ThinLTO backend job '{}' {}", running[i].label,
                              exit.describe());
        for (const auto& output : running[i].outputs) {
          std::error_code ec;
          if (exit.success() && !failure && !std::filesystem::exists(output, ec))
            failure = makeError(ErrorCode::kIo, "ThinLTO backend job '{}' exited 0 but did not "
                                "write '{}'", running[i].label, output);
        }
        running.erase(running.begin() + static_cast<long>(i));
        return;
      }
      std::vector<int> fds;
      for (const auto& r : running)
        fds.push_back(r.child->exitFd());
      (void)support::waitReadable(fds, support::Clock::now() + std::chrono::milliseconds(50));
    }
  };
  for (auto& job : *jobs) {
    if (failure)
      break;
    while (running.size() >= parallel)
      reapOne();
    std::string label = job.command.back(); // the job's output (its args end with -o OUTPUT)
    support::SpawnOptions spawn;
    spawn.argv = std::move(job.command);
    spawn.inheritOutput = true;
    auto child = support::Subprocess::spawn(scope, spawn);
    if (!child.ok()) {
      failure = child.error().withContext("ThinLTO backend job '" + label + "'");
      break;
    }
    running.push_back({std::move(*child), std::move(label), std::move(job.outputs)});
  }
  while (!running.empty())
    reapOne();
  if (failure)
    return *failure;
  return Status::success();
}

} // namespace mlgo::launch
