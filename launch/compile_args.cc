//===- launch/compile_args.cc - which compiler calls a launcher takes -------===//
#include "mlgo/launch/compile_args.h"
#include "mlgo/launch/split_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace mlgo::launch {
namespace {

/// Options whose value is the next argument when it is not joined to them
/// (clang's Separate and JoinedOrSeparate options that builds use).
constexpr std::string_view kTakesValue[] = {"-o",
                                            "-x",
                                            "-I",
                                            "-D",
                                            "-U",
                                            "-F",
                                            "-L",
                                            "-l",
                                            "-u",
                                            "-z",
                                            "-T",
                                            "-e",
                                            "-A",
                                            "-B",
                                            "-include",
                                            "-imacros",
                                            "-include-pch",
                                            "-isystem",
                                            "-iquote",
                                            "-idirafter",
                                            "-iprefix",
                                            "-iwithprefix",
                                            "-iwithprefixbefore",
                                            "-isysroot",
                                            "-iframework",
                                            "-isystem-after",
                                            "-cxx-isystem",
                                            "-imultilib",
                                            "-ivfsoverlay",
                                            "-iwithsysroot",
                                            "--sysroot",
                                            "-MF",
                                            "-MT",
                                            "-MQ",
                                            "-MJ",
                                            "-Xclang",
                                            "-Xlinker",
                                            "-Xassembler",
                                            "-Xpreprocessor",
                                            "-Xanalyzer",
                                            "-Xopenmp-target",
                                            "-Xarch_host",
                                            "-Xarch_device",
                                            "-mllvm",
                                            "-target",
                                            "-arch",
                                            "-working-directory",
                                            "--param",
                                            "-serialize-diagnostics",
                                            "--serialize-diagnostics",
                                            "-dependency-file",
                                            "-dependency-dot",
                                            "-resource-dir",
                                            "-gcc-toolchain",
                                            "-install_name",
                                            "-exported_symbols_list",
                                            "-rpath",
                                            "-aux-target",
                                            "-fmodule-file",
                                            "-fprebuilt-module-path",
                                            "--output",
                                            "--language",
                                            "--include-directory",
                                            "--define-macro",
                                            "--undefine-macro",
                                            "--include",
                                            "--library-directory",
                                            "--prefix",
                                            "--system-header-prefix",
                                            "--no-system-header-prefix",
                                            "-ccc-gcc-name",
                                            "-dumpdir",
                                            "-dumpbase",
                                            "-dumpbase-ext",
                                            "-main-file-name"};

/// Options that make the call something other than a compile to an object.
constexpr std::string_view kNotACompile[] = {"-E",
                                             "-S",
                                             "-M",
                                             "-MM",
                                             "-fsyntax-only",
                                             "-###",
                                             "--version",
                                             "-help",
                                             "--help",
                                             "-dumpversion",
                                             "-dumpmachine",
                                             "-dumpspecs",
                                             "-emit-ast",
                                             "-precompile",
                                             "--precompile",
                                             "-save-temps",
                                             "--save-temps",
                                             "-cc1",
                                             "-cc1as",
                                             "-fdriver-only",
                                             "-print-search-dirs"};

/// Prefixes with the same effect ("-print-file-name=...", "-save-temps=obj").
constexpr std::string_view kNotACompilePrefixes[] = {"-print-", "--print-",
                                                     "-save-temps=", "--save-temps="};

/// The `-x` languages the launcher supports.
constexpr std::string_view kLanguages[] = {"c",
                                           "c++",
                                           "objective-c",
                                           "objective-c++",
                                           "cpp-output",
                                           "c++-cpp-output",
                                           "objective-c-cpp-output",
                                           "objective-c++-cpp-output",
                                           "ir"};

/// Extensions of supported inputs (case matters: `.C` is C++, `.S` is not).
constexpr std::string_view kExtensions[] = {".c",   ".i",   ".cc", ".cp", ".cxx", ".cpp",
                                            ".CPP", ".c++", ".C",  ".ii", ".m",   ".mi",
                                            ".mm",  ".mii", ".ll", ".bc"};

template <size_t N> bool contains(const std::string_view (&list)[N], std::string_view value) {
  return std::find(std::begin(list), std::end(list), value) != std::end(list);
}

bool supportedByExtension(std::string_view path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
    return false;
  return contains(kExtensions, path.substr(dot));
}

/// What a pass over the arguments found.
struct Scan {
  bool compile = false;
  bool languageGiven = false; ///< Some input has a `-x` language.
  std::optional<std::string> passThrough;
  std::vector<std::pair<std::string, std::optional<std::string>>> inputs; ///< (path, -x language)
  std::string output; ///< -o FILE / -oFILE (the last one)
  std::string optLevel = "-O0";
  std::vector<ArgRole> roles;
};

/// "-O2" -> "-O2", "-O" -> "-O1", "-O7" -> "-O3"; nullopt for anything else.
std::optional<std::string> optLevelOf(std::string_view arg) {
  if (!arg.starts_with("-O"))
    return std::nullopt;
  std::string_view v = arg.substr(2);
  if (v.empty())
    return "-O1";
  if (v == "s" || v == "z" || v == "fast" || v == "g")
    return std::string(arg);
  if (v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int level = std::stoi(std::string(v)); // "-O02" is -O2, as for clang
  return "-O" + std::to_string(std::min(level, 3));
}

void scanOption(std::span<const std::string> args, size_t& i, Scan& scan,
                std::optional<std::string>& language) {
  const std::string& arg = args[i];
  if (arg == "-c") {
    scan.compile = true;
    return;
  }
  if (contains(kNotACompile, arg) ||
      std::any_of(std::begin(kNotACompilePrefixes), std::end(kNotACompilePrefixes),
                  [&](std::string_view p) { return arg.starts_with(p); })) {
    if (!scan.passThrough)
      scan.passThrough = arg;
    return;
  }
  if (arg.starts_with("-x")) { // -x LANG, -xLANG
    std::string value = arg.size() > 2 ? arg.substr(2) : std::string();
    if (arg.size() == 2 && i + 1 < args.size()) {
      value = args[++i];
      scan.roles.push_back(ArgRole::kValue);
    }
    language = value == "none" ? std::nullopt : std::optional(value);
    return;
  }
  if (auto level = optLevelOf(arg)) {
    scan.optLevel = *level;
    return;
  }
  if (arg == "-o" && i + 1 < args.size()) {
    scan.output = args[++i];
    scan.roles.back() = ArgRole::kOutput;
    scan.roles.push_back(ArgRole::kOutput);
    return;
  }
  if (arg.starts_with("-o") && arg.size() > 2 && !arg.starts_with("-obj") &&
      !contains(kTakesValue, arg)) {
    scan.output = arg.substr(2);
    scan.roles.back() = ArgRole::kOutput;
    return;
  }
  if (contains(kTakesValue, arg) && i + 1 < args.size()) {
    ++i;
    scan.roles.push_back(ArgRole::kValue);
  }
}

/// Why the one input of a `-c` call is not taken; empty when it is.
std::string singleSourceRefusal(const std::pair<std::string, std::optional<std::string>>& input) {
  const auto& [source, lang] = input;
  if (source == "-")
    return "standard input";
  if (lang ? !contains(kLanguages, *lang) : !supportedByExtension(source))
    return lang ? "language " + *lang : "unsupported input " + source;
  return {};
}

} // namespace

bool isSupportedSource(std::string_view path) {
  return supportedByExtension(path);
}

CallKind classifyCall(std::span<const std::string> args) {
  Scan scan;
  std::optional<std::string> language;
  bool onlyInputs = false; // after "--"
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    scan.roles.push_back(ArgRole::kOption);
    if (!onlyInputs && arg == "--") {
      onlyInputs = true;
    } else if (!onlyInputs && arg.starts_with("@")) {
      if (!scan.passThrough)
        scan.passThrough = "a response file (" + arg + ")";
    } else if (!onlyInputs && arg.size() > 1 && arg[0] == '-') {
      scanOption(args, i, scan, language);
    } else {
      scan.roles.back() = ArgRole::kInput;
      scan.inputs.emplace_back(arg, language);
      scan.languageGiven = scan.languageGiven || language.has_value();
    }
  }
  CallKind kind;
  kind.output = scan.output;
  kind.optLevel = scan.optLevel;
  kind.roles = std::move(scan.roles);
  if (scan.inputs.size() == 1)
    kind.source = scan.inputs[0].first;
  if (scan.passThrough)
    kind.reason = *scan.passThrough;
  else if (scan.compile && scan.inputs.size() == 1)
    kind.reason = singleSourceRefusal(scan.inputs[0]);
  else if (scan.compile && scan.inputs.empty())
    kind.reason = "0 inputs";
  else
    planSplit(args, scan.compile, scan.languageGiven, kind);
  kind.interactive = kind.reason.empty() && !kind.split;
  return kind;
}

} // namespace mlgo::launch
