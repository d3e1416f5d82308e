//===- corpus/command_line.cc - recompile command lines -------------------===//
#include "mlgo/corpus/command_line.h"

#include <algorithm>
#include <array>
#include <set>

namespace mlgo::corpus {

namespace {

/// A standard deletion: matches `flag` exactly or `flag=...`; when matched
/// exactly and `takesValue`, the next argument (its value) goes too.
struct StandardDeletion {
  std::string_view flag;
  bool takesValue;
};

constexpr std::array<StandardDeletion, 11> kStandardDeletions = {{
    {"-fembed-bitcode", false},  // would embed bitcode again
    {"-split-dwarf-file", true}, // files of the original build
    {"-split-dwarf-output", true},
    {"-fthinlto-index", true},      // re-added from the corpus when it has ThinLTO
    {"-fprofile-sample-use", true}, // profiles of the original build
    {"-fprofile-remapping-file", true},
    {"-dependency-file", true}, // dependency-file output and its options
    {"-MT", true},
    {"-MQ", true},
    {"-sys-header-deps", false},
    {"-MP", false},
}};

constexpr std::array<std::string_view, kStandardDeletions.size()> kStandardDeletionNames = [] {
  std::array<std::string_view, kStandardDeletions.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i)
    names[i] = kStandardDeletions[i].flag;
  return names;
}();

/// The values of `-mllvm` that make clang ask a host over a channel (what
/// mlgo-env's problems add, env/problem.h): a module compiled through
/// `mlgo-env launch` records them, with a channel that is long gone.
constexpr std::string_view kInteractiveOptions[] = {"-enable-ml-inliner=",
                                                    "-inliner-interactive-",
                                                    "-ml-advisor-size-increase-threshold=",
                                                    "-ml-inliner-ir2vec-vocab-file=",
                                                    "-ir2vec-vocab-path=",
                                                    "-regalloc-enable-advisor=",
                                                    "-regalloc-evict-interactive-",
                                                    "-regalloc-enable-priority-advisor=",
                                                    "-regalloc-priority-interactive-"};

bool interactiveOption(std::string_view value) {
  return std::any_of(std::begin(kInteractiveOptions), std::end(kInteractiveOptions),
                     [value](std::string_view prefix) { return value.starts_with(prefix); });
}

bool startsWith(std::string_view arg, std::string_view flag) {
  return arg.starts_with(flag);
}

/// How many arguments a standard deletion removes at `arg` (0 = no match).
int standardDeletionWidth(std::string_view arg) {
  for (const StandardDeletion& d : kStandardDeletions) {
    if (arg == d.flag)
      return d.takesValue ? 2 : 1;
    if (arg.size() > d.flag.size() && arg.starts_with(d.flag) && arg[d.flag.size()] == '=')
      return 1;
  }
  return 0;
}

std::string expandTemplate(std::string value, const ModuleSpec& module) {
  auto replaceAll = [&value](std::string_view key, const std::string& with) {
    for (std::size_t at = value.find(key); at != std::string::npos;
         at = value.find(key, at + with.size()))
      value.replace(at, key.size(), with);
  };
  replaceAll("{context.module_full_path}", module.bitcodePath.string());
  replaceAll("{context.thinlto_full_path}",
             module.thinLtoIndexPath ? module.thinLtoIndexPath->string() : std::string());
  return value;
}

bool isReserved(std::string_view flag) {
  return flag.starts_with("-fthinlto-index") || flag == "-x" || flag == "-o";
}

} // namespace

std::span<const std::string_view> standardDeletedFlags() {
  return kStandardDeletionNames;
}

Status validateFlagRules(const FlagRules& rules) {
  auto checkName = [](std::string_view flag, std::string_view kind) -> Status {
    if (flag.empty() || flag.front() != '-')
      return makeError(ErrorCode::kInvalidArgument,
                       "{} flag '{}' must be a non-empty option starting with '-'", kind, flag);
    if (isReserved(flag))
      return makeError(ErrorCode::kInvalidArgument,
                       "{} flag '{}' is managed by mlgo-env and cannot be changed", kind, flag);
    return Status::success();
  };
  std::set<std::string, std::less<>> replaced;
  for (const auto& [flag, value] : rules.replaceFlags) {
    MLGO_TRY(checkName(flag, "replace"));
    if (!replaced.insert(flag).second)
      return makeError(ErrorCode::kInvalidArgument, "flag '{}' is replaced twice", flag);
  }
  for (const std::string& flag : rules.deleteFlags) {
    MLGO_TRY(checkName(flag, "delete"));
    if (replaced.contains(flag))
      return makeError(ErrorCode::kInvalidArgument, "flag '{}' is both deleted and replaced", flag);
  }
  for (const std::string& arg : rules.addFlags) {
    std::string_view key = std::string_view(arg).substr(0, arg.find('='));
    if (replaced.contains(key))
      return makeError(ErrorCode::kInvalidArgument, "flag '{}' is both added and replaced", key);
    if (std::find(rules.deleteFlags.begin(), rules.deleteFlags.end(), key) !=
        rules.deleteFlags.end())
      return makeError(ErrorCode::kInvalidArgument, "flag '{}' is both added and deleted", key);
    if (isReserved(key))
      return makeError(ErrorCode::kInvalidArgument,
                       "added flag '{}' is managed by mlgo-env and cannot be changed", key);
  }
  return Status::success();
}

Result<FlagRules> parseFlagRules(std::vector<std::string> deleteFlags,
                                 std::span<const std::string> replaceFlags,
                                 std::vector<std::string> addFlags) {
  FlagRules rules;
  rules.deleteFlags = std::move(deleteFlags);
  rules.addFlags = std::move(addFlags);
  for (const std::string& rule : replaceFlags) {
    std::size_t eq = rule.find('=');
    if (eq == std::string::npos || eq == 0)
      return makeError(ErrorCode::kInvalidArgument,
                       "replace rule '{}' must have the form FLAG=VALUE", rule);
    rules.replaceFlags.emplace_back(rule.substr(0, eq), rule.substr(eq + 1));
  }
  MLGO_TRY(validateFlagRules(rules));
  return rules;
}

Result<std::vector<std::string>> parseCommandFile(std::string_view contents,
                                                  std::string_view source) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < contents.size()) {
    std::size_t end = contents.find('\0', start);
    if (end == std::string_view::npos)
      end = contents.size();
    if (end > start)
      args.emplace_back(contents.substr(start, end - start));
    start = end + 1;
  }
  if (args.empty())
    return makeError(ErrorCode::kParse,
                     "{}: the command file is empty (expected cc1 "
                     "arguments starting with -cc1)",
                     source);
  if (args.front() != "-cc1")
    return makeError(ErrorCode::kParse,
                     "{}: the command does not start with -cc1 (found '{}'); a .cmd file "
                     "must hold the NUL-separated cc1 arguments clang embedded",
                     source, args.front());
  return args;
}

Result<std::vector<std::string>> recompileArgs(const ModuleSpec& module,
                                               const std::filesystem::path& output,
                                               const FlagRules& rules) {
  MLGO_TRY(validateFlagRules(rules));
  std::vector<std::string> result;
  result.reserve(module.args.size() + rules.addFlags.size() + 10);
  std::vector<int> replaceHits(rules.replaceFlags.size(), 0);

  auto userDeleted = [&rules](std::string_view arg) {
    return std::any_of(rules.deleteFlags.begin(), rules.deleteFlags.end(),
                       [arg](const std::string& f) { return startsWith(arg, f); });
  };

  const std::vector<std::string>& args = module.args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    bool joined = arg.find('=') != std::string::npos;
    if (arg == "-mllvm" && i + 1 < args.size() && interactiveOption(args[i + 1])) {
      ++i;
      continue;
    }
    if (int width = standardDeletionWidth(arg); width > 0) {
      i += static_cast<std::size_t>(width - 1);
      continue;
    }
    if (userDeleted(arg)) {
      if (!joined)
        ++i; // also drop the flag's separate value (ml-compiler-opt's rule)
      continue;
    }
    auto rule = std::find_if(rules.replaceFlags.begin(), rules.replaceFlags.end(),
                             [&arg](const auto& r) { return startsWith(arg, r.first); });
    if (rule == rules.replaceFlags.end()) {
      result.push_back(arg);
      continue;
    }
    ++replaceHits[static_cast<std::size_t>(rule - rules.replaceFlags.begin())];
    std::string value = expandTemplate(rule->second, module);
    if (joined) {
      result.push_back(rule->first + "=" + value);
    } else {
      result.push_back(arg);
      result.push_back(std::move(value));
      ++i; // skip the old value
    }
  }
  for (std::size_t r = 0; r < rules.replaceFlags.size(); ++r) {
    if (replaceHits[r] != 1)
      return makeError(ErrorCode::kInvalidArgument,
                       "replace rule for '{}' matched {} arguments of module '{}' (expected "
                       "exactly one)",
                       rules.replaceFlags[r].first, replaceHits[r], module.name);
  }
  result.insert(result.end(), rules.addFlags.begin(), rules.addFlags.end());
  result.insert(result.end(), {"-x", "ir", module.bitcodePath.string()});
  if (module.thinLtoIndexPath) {
    result.push_back("-fthinlto-index=" + module.thinLtoIndexPath->string());
    result.insert(result.end(), {"-mllvm", "-thinlto-assume-merged"});
  }
  result.insert(result.end(), {"-o", output.string()});
  return result;
}

} // namespace mlgo::corpus
