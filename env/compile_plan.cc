//===- env/compile_plan.cc - the commands of an episode --------------------===//
#include "compile_plan.h"

#include "problems_impl.h"

namespace mlgo::env {
namespace {

constexpr std::string_view kObjectName = "out.o";
constexpr std::string_view kRemarksName = "remarks.opt";
constexpr std::string_view kChannelName = "channel";
constexpr std::string_view kPriorityChannelName = "priority-channel";
constexpr std::string_view kOptimizedName = "opt.bc";

bool isCc1(const std::vector<std::string>& args) {
  return !args.empty() && args[0] == "-cc1";
}

/// `args` with the module's bitcode path spelled "<bitcode>": a cache key's
/// arguments must not depend on where the corpus lies.
std::vector<std::string> keyArgs(std::vector<std::string> args, const corpus::ModuleSpec& module) {
  std::string bitcode = module.bitcodePath.string();
  for (std::string& arg : args)
    if (arg == bitcode)
      arg = "<bitcode>";
  return args;
}

/// Sets `command` to run `clang` on `args` (room for `more` arguments after).
void setCommand(CompileCommand& command, const std::filesystem::path& clang,
                std::vector<std::string>&& args, size_t more) {
  command.argv.reserve(args.size() + 1 + more);
  command.argv.push_back(clang.string());
  command.argv.insert(command.argv.end(), std::make_move_iterator(args.begin()),
                      std::make_move_iterator(args.end()));
  command.environment = {"LLVM_DISABLE_SYMBOLIZATION=1"};
}

} // namespace

Result<std::vector<std::string>>
CompilePlanner::baseArgs(const corpus::ModuleSpec& module, const std::filesystem::path& object,
                         const std::filesystem::path& remarks) const {
  auto args = corpus::recompileArgs(module, object, rules_);
  if (!args.ok())
    return args.error().withContext(fmt::format("module {}", module.name));
  bool cc1 = isCc1(*args);
  for (std::string& arg : scoreArgs(scoreKind(), remarks, cc1))
    args->push_back(std::move(arg));
  if (!cc1)
    args->push_back("-fno-crash-diagnostics");
  return args;
}

void CompilePlanner::addPriorityChannel(CompileCommand& command,
                                        const std::filesystem::path& base) const {
  command.extraChannels.push_back(base);
  for (std::string& arg : detail::priorityProblem().interactiveArgs(base.string(), options_))
    command.argv.push_back(std::move(arg));
}

Result<PlannedCompile> CompilePlanner::plan(const corpus::ModuleSpec& module,
                                            bool interactive) const {
  auto dir = support::TempDir::create(
      *scope_, interactive ? "mlgo-env-episode-" : "mlgo-env-baseline-", tempParent_);
  if (!dir.ok())
    return dir.error();
  PlannedCompile planned{std::move(*dir), {}};
  CompileCommand& command = planned.command;
  command.objectPath = planned.dir.path() / kObjectName;
  if (scoreReadsRemarks(scoreKind()))
    command.remarksPath = planned.dir.path() / kRemarksName;
  auto args = baseArgs(module, command.objectPath, command.remarksPath);
  if (!args.ok())
    return args.error();
  setCommand(command, clang_, std::move(*args), 8);
  if (interactive) {
    command.channelBase = planned.dir.path() / kChannelName;
    for (std::string& arg : problem_->interactiveArgs(command.channelBase.string(), options_))
      command.argv.push_back(std::move(arg));
    if (priorities_ && priorities_->find(module.name) != nullptr)
      addPriorityChannel(command, planned.dir.path() / kPriorityChannelName);
  }
  return planned;
}

Result<PlannedCompile> CompilePlanner::interactive(const corpus::ModuleSpec& module) const {
  return plan(module, /*interactive=*/true);
}

Result<PlannedCompile> CompilePlanner::baseline(const corpus::ModuleSpec& module) const {
  return plan(module, /*interactive=*/false);
}

ScoreKind CompilePlanner::scoreKind() const {
  auto kind = compileScoreKind(*problem_, options_.regallocScore);
  return kind.ok() ? *kind : problem_->scoreKind();
}

Result<std::vector<std::string>>
CompilePlanner::baselineKeyArgs(const corpus::ModuleSpec& module) const {
  auto args = baseArgs(module, "<object>", "<remarks>");
  if (!args.ok())
    return args.error();
  // A score of another kind is another value: never the cached one. The
  // default's keys stay as they were.
  if (scoreKind() == ScoreKind::kRegallocInstructions)
    args->push_back("<score:instructions>");
  if (scoreKind() == ScoreKind::kRegallocExecuted)
    args->push_back("<score:executed>");
  return keyArgs(std::move(*args), module);
}

Result<std::vector<std::string>>
CompilePlanner::optimizationArgs(const corpus::ModuleSpec& module,
                                 const std::filesystem::path& output) const {
  auto args = corpus::recompileArgs(module, output, rules_);
  if (!args.ok())
    return args.error().withContext(fmt::format("module {}", module.name));
  if (!isCc1(*args))
    return makeError(ErrorCode::kInvalidArgument,
                     "module {}: its optimised IR is made from cc1 commands only", module.name);
  // cc1 takes the last action flag: this one overrides the command's -emit-obj.
  args->insert(args->end(), {"-emit-llvm-bc", "-emit-llvm-uselists"});
  return args;
}

Result<PlannedCompile> CompilePlanner::optimization(const corpus::ModuleSpec& module) const {
  auto dir = support::TempDir::create(*scope_, "mlgo-env-optimize-", tempParent_);
  if (!dir.ok())
    return dir.error();
  PlannedCompile planned{std::move(*dir), {}};
  CompileCommand& command = planned.command;
  command.objectPath = planned.dir.path() / kOptimizedName;
  auto args = optimizationArgs(module, command.objectPath);
  if (!args.ok())
    return args.error();
  setCommand(command, clang_, std::move(*args), 0);
  return planned;
}

Result<std::vector<std::string>>
CompilePlanner::optimizationKeyArgs(const corpus::ModuleSpec& module) const {
  auto args = optimizationArgs(module, "<output>");
  if (!args.ok())
    return args.error();
  return keyArgs(std::move(*args), module);
}

} // namespace mlgo::env
