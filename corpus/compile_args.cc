//===- corpus/compile_args.cc - what a compile command compiles and writes ===//
///
/// \file
/// The word-level half of compile_entry.h: which words of a compile command
/// are sources, which objects it writes, and the command that compiles one
/// of its sources again.
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/compile_entry.h"

#include <algorithm>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

/// Driver options (clang-22's and gcc's) whose value is the next word.
constexpr std::string_view kSeparateValue =
    " -o --output -MF -MT -MQ -MJ -x -include -include-pch -imacros "
    " -idirafter -iprefix -iwithprefix -iwithprefixbefore -isystem "
    " -isystem-after -isysroot -iquote -ivfsoverlay -iframework "
    " -cxx-isystem -I -D -U -L -F -T -u -z -A -B -Xclang -Xlinker "
    " -Xassembler -Xpreprocessor -Xopenmp-target -mllvm -target -arch "
    " --sysroot --param -dumpdir -dumpbase -dumpbase-ext -aux-info "
    " --serialize-diagnostics --include-directory --define-macro ";

constexpr std::string_view kSourceExtensions =
    " .c .cc .cp .cpp .cxx .c++ .C .CC .CPP .m .mm .M .i .ii .mi .mii .s "
    " .S .sx .ll .cu .hip .cl ";

/// Whether `word` is one of the space-separated words of `list` (which
/// starts and ends with a space).
bool listed(std::string_view list, std::string_view word) {
  return !word.empty() && word.find(' ') == std::string_view::npos &&
         list.find(fmt::format(" {} ", word)) != std::string_view::npos;
}

bool hasSourceExtension(std::string_view word) {
  std::string ext = fs::path(word).extension().string();
  return listed(kSourceExtensions, ext);
}

enum class Kind { kCompiler, kOption, kValue, kSource, kInput };

/// What each word of `args` is; a value belongs to the option before it.
std::vector<Kind> classify(const std::vector<std::string>& args) {
  std::vector<Kind> kinds(args.size(), Kind::kInput);
  bool languageForced = false; // after -x LANG (not "none"), any input is a source
  bool optionsEnded = false;   // after "--", every word is an input
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i == 0) {
      kinds[i] = Kind::kCompiler;
    } else if (!optionsEnded && a.size() > 1 && a.front() == '-') {
      kinds[i] = Kind::kOption;
      optionsEnded = a == "--";
      if (a.starts_with("-x") && a.size() > 2)
        languageForced = a != "-xnone";
      if (listed(kSeparateValue, a) && i + 1 < args.size()) {
        kinds[++i] = Kind::kValue;
        if (a == "-x")
          languageForced = args[i] != "none";
      }
    } else if (a != "-" && (languageForced || hasSourceExtension(a))) {
      kinds[i] = Kind::kSource;
    }
  }
  return kinds;
}

/// Whether the option word `a` names an output or a dependency file (its
/// separate value, if any, goes with it).
bool outputOrDependencyFlag(std::string_view a) {
  static constexpr std::string_view kExact = " -o --output -MD -MMD -MP -MG -MV -MF -MT -MQ -MJ "
                                             " --write-dependencies --write-user-dependencies ";
  if (listed(kExact, a))
    return true;
  for (std::string_view joined : {"-MF", "-MT", "-MQ", "-MJ", "--output=", "-Wp,-MD,", "-Wp,-MMD,"})
    if (a.starts_with(joined))
      return true;
  return a.starts_with("-o") && !a.starts_with("-obj");
}

/// The value of the command's -o (`-o x`, `-ox`, `--output=x`, `--output x`).
std::optional<std::string> outputValue(const std::vector<std::string>& args,
                                       const std::vector<Kind>& kinds) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (kinds[i] != Kind::kOption)
      continue;
    const std::string& a = args[i];
    if ((a == "-o" || a == "--output") && i + 1 < args.size())
      return args[i + 1];
    if (a.starts_with("--output="))
      return a.substr(9);
    if (a.size() > 2 && a.starts_with("-o") && !a.starts_with("-obj"))
      return a.substr(2);
  }
  return std::nullopt;
}

/// Why `args` do not compile to an object, or empty if they do.
std::string notACompile(const std::vector<std::string>& args) {
  bool compileOnly = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-E" || a == "-S" || a == "-M" || a == "-MM" || a == "-fsyntax-only" ||
        a == "--analyze")
      return fmt::format("it runs '{}', which writes no object file", a);
    compileOnly = compileOnly || a == "-c";
  }
  return compileOnly ? std::string() : "it has no -c (a link or other step, not a compile)";
}

} // namespace

std::vector<std::size_t> sourceArguments(const std::vector<std::string>& args) {
  std::vector<Kind> kinds = classify(args);
  std::vector<std::size_t> sources;
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == Kind::kSource)
      sources.push_back(i);
  return sources;
}

std::vector<CompiledObject> objectOutputs(const std::vector<std::string>& args,
                                          const fs::path& directory, std::string_view output,
                                          std::string_view file, std::string* why) {
  std::string notCompile = notACompile(args);
  if (!notCompile.empty()) {
    *why = std::move(notCompile);
    return {};
  }
  auto resolve = [&directory](const fs::path& p) { return (directory / p).lexically_normal(); };
  // Like clang: the source's file name with ".o" for its extension, in the directory.
  auto derived = [&resolve](std::string_view source) {
    return resolve(fs::path(source).filename().replace_extension(".o"));
  };
  std::vector<Kind> kinds = classify(args);
  std::vector<std::size_t> sources = sourceArguments(args);
  std::optional<std::string> out = outputValue(args, kinds);
  if (!file.empty() && sources.size() > 1) { // Bear's style: one entry per source
    fs::path wanted = resolve(fs::path(file));
    auto it = std::find_if(sources.begin(), sources.end(),
                           [&](std::size_t s) { return resolve(args[s]) == wanted; });
    if (it != sources.end())
      sources = {*it};
  }
  if (sources.size() > 1) {
    if (out) {
      *why = fmt::format("it compiles {} sources into the one -o '{}' (clang refuses that)",
                         sources.size(), *out);
      return {};
    }
    std::vector<CompiledObject> objects;
    for (std::size_t s : sources)
      objects.push_back({derived(args[s]), s});
    return objects;
  }
  std::size_t source = sources.empty() ? 0 : sources.front();
  if (out)
    return {{resolve(fs::path(*out)), source}};
  if (!output.empty())
    return {{resolve(fs::path(output)), source}};
  std::string_view name = source ? std::string_view(args[source]) : file;
  if (name.empty()) {
    *why = "it has no -o and names no source file to derive the object name from";
    return {};
  }
  return {{derived(name), source}};
}

std::vector<std::string> recompileArguments(const std::vector<std::string>& args,
                                            std::size_t sourceArg) {
  std::vector<Kind> kinds = classify(args);
  std::vector<std::string> kept;
  kept.reserve(args.size());
  bool dropValue = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    switch (kinds[i]) {
    case Kind::kValue:
      if (dropValue)
        continue;
      break;
    case Kind::kOption:
      dropValue = outputOrDependencyFlag(args[i]);
      if (dropValue)
        continue;
      break;
    case Kind::kSource:
      if (sourceArg != 0 && i != sourceArg)
        continue;
      break;
    default:
      break;
    }
    kept.push_back(args[i]);
  }
  return kept;
}

} // namespace mlgo::corpus
