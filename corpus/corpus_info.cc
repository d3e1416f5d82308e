//===- corpus/corpus_info.cc - what a corpus holds ------------------------===//
#include "mlgo/corpus/corpus_info.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/description.h"

#include "file_util.h"
#include "thinlto_imports.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

/// Flags whose separate value names a file of the original build or the
/// module itself: grouped as `flag …`.
constexpr std::array<std::string_view, 12> kPerModuleValueFlags = {
    "-main-file-name",         "-o",
    "-dependency-file",        "-MT",
    "-split-dwarf-file",       "-split-dwarf-output",
    "-fdebug-compilation-dir", "-fcoverage-compilation-dir",
    "-resource-dir",           "-isysroot",
    "-coverage-notes-file",    "-coverage-data-file"};

bool isPerModuleFlag(std::string_view flag) {
  return std::find(kPerModuleValueFlags.begin(), kPerModuleValueFlags.end(), flag) !=
         kPerModuleValueFlags.end();
}

/// The distinct flag tokens of one command (see FlagUse), skipping `-cc1`
/// and input files.
std::set<std::string> flagTokens(const std::vector<std::string>& args) {
  std::set<std::string> tokens;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-cc1" || arg.empty() || arg.front() != '-')
      continue;
    bool hasValue = i + 1 < args.size() && !args[i + 1].empty() && args[i + 1].front() != '-';
    if (hasValue) {
      const std::string& value = args[++i];
      bool pathLike = isPerModuleFlag(arg) || value.find('/') != std::string::npos;
      tokens.insert(pathLike ? arg + " …" : arg + " " + value);
      continue;
    }
    std::size_t eq = arg.find('=');
    if (eq != std::string::npos && arg.find('/', eq) != std::string::npos)
      tokens.insert(arg.substr(0, eq + 1) + "…");
    else if (eq == std::string::npos && arg.size() > 2 && (arg[1] == 'I' || arg[1] == 'D') &&
             arg.find('/') != std::string::npos)
      tokens.insert(arg.substr(0, 2) + "…");
    else
      tokens.insert(arg);
  }
  return tokens;
}

bool startsWithBitcodeMagic(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, sizeof magic))
    return false;
  std::string_view bytes(magic, sizeof magic);
  return bytes == std::string_view("BC\xC0\xDE", 4) ||
         bytes == std::string_view("\xDE\xC0\x17\x0B", 4);
}

/// Checks `<root>/<name><suffix>`: present, inside the root, bitcode.
std::optional<std::string> checkBitcodeFile(const fs::path& root, const std::string& name,
                                            std::string_view suffix, std::string_view what,
                                            std::uint64_t* size) {
  fs::path path = root / name;
  path += suffix;
  if (!detail::resolvesInside(root, path))
    return fmt::format("{} '{}' resolves outside the corpus directory", what, path.string());
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return fmt::format("{} '{}' does not exist", what, path.string());
  if (!startsWithBitcodeMagic(path))
    return fmt::format("{} '{}' is not LLVM bitcode", what, path.string());
  if (size)
    *size = fs::file_size(path, ec);
  return std::nullopt;
}

struct Tally {
  std::map<std::string, std::size_t> flags;
  std::size_t commands = 0;
  std::vector<std::pair<std::uint64_t, std::string>> sizes;
};

/// Counts one command used by `modules` modules.
void countCommand(Tally& tally, const std::vector<std::string>& args, std::size_t modules = 1) {
  tally.commands += modules;
  for (const std::string& token : flagTokens(args))
    tally.flags[token] += modules;
}

/// Adds what module `name` imported to info.imports; an index that is not
/// the module's summary index is a problem (clang would refuse it).
template <typename Problem>
void countImports(CorpusInfo& info, const std::string& name, Problem& problem) {
  Result<std::size_t> imported = detail::countImportedFunctions(info.root / (name + ".bc"),
                                                                info.root / (name + ".thinlto.bc"));
  if (!imported)
    return problem(imported.error().message());
  ThinLtoImports& imports = info.imports.value();
  ++imports.modulesCounted;
  imports.functions += *imported;
  if (*imported > 0)
    ++imports.importing;
  if (*imported > imports.mostFunctions) {
    imports.mostFunctions = *imported;
    imports.mostModule = name;
  }
}

/// Inspects one module, adding its problems and its command to the tally.
void inspectModule(CorpusInfo& info, Tally& tally, const CorpusDescription& description,
                   const std::string& name) {
  auto problem = [&](std::string message) { info.problems.push_back({name, std::move(message)}); };
  if (!detail::isSafeRelativeName(name))
    return problem("the name is not a plain relative path (empty, absolute, or with '.', '..' "
                   "or empty components)");
  std::uint64_t size = 0;
  std::optional<std::string> badBitcode =
      checkBitcodeFile(info.root, name, ".bc", "bitcode", &size);
  if (badBitcode)
    problem(*badBitcode);
  else
    tally.sizes.emplace_back(size, name);
  if (description.hasThinLto) {
    if (auto bad = checkBitcodeFile(info.root, name, ".thinlto.bc", "ThinLTO index", nullptr))
      problem(*bad + " (the corpus has has_thinlto; the link makes the index with "
                     "-Wl,--thinlto-emit-index-files)");
    else if (!badBitcode)
      countImports(info, name, problem);
  }
  if (description.globalCommandOverride)
    return;
  fs::path cmd = info.root / (name + ".cmd");
  if (!detail::resolvesInside(info.root, cmd))
    return problem(fmt::format("command file '{}' resolves outside the corpus", cmd.string()));
  Result<std::string> contents = detail::readFile(cmd, "command file");
  if (!contents)
    return problem(contents.error().message());
  Result<std::vector<std::string>> args = parseCommandFile(*contents, cmd.string());
  if (!args)
    return problem(args.error().message());
  countCommand(tally, *args);
}

std::vector<FlagUse> sortedUses(std::vector<FlagUse> uses) {
  std::sort(uses.begin(), uses.end(), [](const FlagUse& a, const FlagUse& b) {
    return a.modules != b.modules ? a.modules > b.modules : a.flag < b.flag;
  });
  return uses;
}

void summarise(CorpusInfo& info, Tally& tally) {
  if (!tally.sizes.empty()) {
    std::sort(tally.sizes.begin(), tally.sizes.end());
    info.smallestBytes = tally.sizes.front().first;
    info.smallestModule = tally.sizes.front().second;
    info.largestBytes = tally.sizes.back().first;
    info.largestModule = tally.sizes.back().second;
    info.medianBytes = tally.sizes[tally.sizes.size() / 2].first;
    for (const auto& [size, name] : tally.sizes)
      info.bitcodeBytes += size;
  }
  std::vector<FlagUse> levels, targets, others;
  for (const auto& [flag, count] : tally.flags) {
    if (flag.starts_with("-O") && flag.find(' ') == std::string::npos)
      levels.push_back({flag, count});
    else if (flag.starts_with("-triple "))
      targets.push_back({flag.substr(8), count});
    else if (count == tally.commands)
      info.commonFlags.push_back(flag);
    else
      others.push_back({flag, count});
  }
  info.optimisationLevels = sortedUses(std::move(levels));
  info.targets = sortedUses(std::move(targets));
  info.otherFlags = sortedUses(std::move(others));
}

} // namespace

Result<CorpusInfo> inspectCorpus(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return makeError(ErrorCode::kNotFound, "corpus directory '{}' does not exist", root.string());
  Result<CorpusDescription> description = readDescription(root);
  MLGO_TRY(description);
  CorpusInfo info;
  info.root = fs::canonical(root, ec);
  if (ec)
    info.root = fs::absolute(root).lexically_normal();
  info.modules = description->modules.size();
  info.hasThinLto = description->hasThinLto;
  if (info.hasThinLto)
    info.imports.emplace();
  info.commandOverride = description->globalCommandOverride;
  if (description->modules.empty())
    info.problems.push_back({"", "the description lists no module"});
  if (info.commandOverride) {
    for (const std::string& arg : *info.commandOverride) {
      if (arg.find(kUnspecifiedOverride) != std::string::npos) {
        info.problems.push_back(
            {"", fmt::format("'global_command_override' holds the placeholder \"{}\"; replace "
                             "it with the clang arguments to compile every module with",
                             kUnspecifiedOverride)});
        break;
      }
    }
  }
  Tally tally;
  if (info.commandOverride)
    countCommand(tally, *info.commandOverride, info.modules);
  std::set<std::string> seen;
  for (const std::string& name : description->modules) {
    if (!seen.insert(name).second) {
      info.problems.push_back({name, "listed twice in the description"});
      continue;
    }
    inspectModule(info, tally, *description, name);
  }
  summarise(info, tally);
  return info;
}

namespace {

std::string kib(std::uint64_t bytes) {
  return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
}

void appendUses(std::string& out, std::string_view title, const std::vector<FlagUse>& uses,
                std::size_t maxListed) {
  if (uses.empty())
    return;
  out += fmt::format("{}:", title);
  for (std::size_t i = 0; i < uses.size() && i < maxListed; ++i)
    out += fmt::format(" {} ({})", uses[i].flag, uses[i].modules);
  if (uses.size() > maxListed)
    out += fmt::format(" ... and {} more", uses.size() - maxListed);
  out += "\n";
}

std::string joined(const std::vector<std::string>& words, std::size_t maxListed) {
  std::string out;
  for (std::size_t i = 0; i < words.size() && i < maxListed; ++i)
    out += (i ? " " : "") + words[i];
  if (words.size() > maxListed)
    out += fmt::format(" ... and {} more", words.size() - maxListed);
  return out;
}

} // namespace

std::string formatCorpusInfo(const CorpusInfo& info, std::size_t maxListed) {
  std::string out = fmt::format("corpus: {}\n", info.root.string());
  out += fmt::format("modules: {} ({} of bitcode", info.modules, kib(info.bitcodeBytes));
  if (!info.smallestModule.empty())
    out += fmt::format("; smallest {} {}, median {}, largest {} {}", info.smallestModule,
                       kib(info.smallestBytes), kib(info.medianBytes), info.largestModule,
                       kib(info.largestBytes));
  out += ")\n";
  out += fmt::format("ThinLTO: {}\n", info.hasThinLto
                                          ? "yes (each module is compiled with its .thinlto.bc "
                                            "index, -fthinlto-index=)"
                                          : "no");
  if (info.imports)
    out += fmt::format(
        "ThinLTO imports: {} of {} modules import functions from other "
        "modules ({} functions in all{})\n",
        info.imports->importing, info.imports->modulesCounted, info.imports->functions,
        info.imports->mostModule.empty()
            ? std::string()
            : fmt::format("; most: {}, {}", info.imports->mostModule, info.imports->mostFunctions));
  if (info.commandOverride)
    out += fmt::format("commands: global_command_override for every module: {}\n",
                       joined(*info.commandOverride, 1000));
  else
    out += "commands: each module's .cmd (cc1 arguments)\n";
  appendUses(out, "optimisation levels", info.optimisationLevels, maxListed);
  appendUses(out, "targets", info.targets, maxListed);
  if (!info.commonFlags.empty())
    out += fmt::format("flags in every command: {}\n", joined(info.commonFlags, 4 * maxListed));
  appendUses(out, "flags in some commands", info.otherFlags, maxListed);
  if (info.problems.empty()) {
    out += "problems: none found; every module has what it needs to compile\n";
    return out;
  }
  out += fmt::format("problems ({}):\n", info.problems.size());
  for (std::size_t i = 0; i < info.problems.size() && i < maxListed; ++i) {
    const CorpusProblem& p = info.problems[i];
    out += fmt::format("  {}: {}\n", p.module.empty() ? "corpus" : p.module, p.message);
  }
  if (info.problems.size() > maxListed)
    out += fmt::format("  ... and {} more\n", info.problems.size() - maxListed);
  return out;
}

} // namespace mlgo::corpus
