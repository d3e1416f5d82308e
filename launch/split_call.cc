//===- launch/split_call.cc - several sources in one compiler call ---------===//
#include "mlgo/launch/split_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace mlgo::launch {
namespace {

/// Options that name one file for the whole call, or a file after the
/// object or the output, or that the launcher is unsure of: a call with one
/// of them (or one starting so) is not taken apart.
constexpr std::string_view kRefusedPrefixes[] = {"-MF",
                                                 "-MT",
                                                 "-MQ",
                                                 "-MJ",
                                                 "-include-pch",
                                                 "-emit-",
                                                 "-fpch-",
                                                 "-gsplit-dwarf",
                                                 "-ftime-trace",
                                                 "--coverage",
                                                 "-coverage",
                                                 "-fprofile-arcs",
                                                 "-ftest-coverage",
                                                 "-fstack-usage",
                                                 "-fsave-optimization-record",
                                                 "-foptimization-record-file",
                                                 "-dumpdir",
                                                 "-dumpbase",
                                                 "-fmodule"};

/// Extensions of what a link takes as it is (objects and libraries).
constexpr std::string_view kLinkerInputs[] = {".o", ".obj", ".a", ".so", ".dylib"};

std::string_view fileName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// `x.o`, `libz.a`, `libz.so`, `libz.so.1.2.13`.
bool isLinkerInput(std::string_view path) {
  std::string_view name = fileName(path);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0)
    return false;
  if (std::find(std::begin(kLinkerInputs), std::end(kLinkerInputs), name.substr(dot)) !=
      std::end(kLinkerInputs))
    return true;
  size_t so = name.find(".so.");
  return so != std::string_view::npos && so > 0 &&
         std::all_of(name.begin() + so + 4, name.end(),
                     [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

/// Whether `option` stops a split call (`link`: a compile-and-link) from
/// being taken apart.
bool refusedOption(std::string_view option, bool link) {
  if (std::any_of(std::begin(kRefusedPrefixes), std::end(kRefusedPrefixes),
                  [&](std::string_view p) { return option.starts_with(p); }))
    return true;
  if (option.starts_with("-Wp,") && option.find(",-M") != std::string_view::npos)
    return true;
  // A compile-and-link's dependency file is named after its output.
  return link && option.starts_with("-M");
}

/// Why the inputs of a split call cannot be taken apart; empty when they
/// can (then `kind.sources` holds the sources).
std::string checkInputs(std::span<const std::string> args, bool link, CallKind& kind,
                        const std::string& what) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (kind.roles[i] != ArgRole::kInput)
      continue;
    const std::string& input = args[i];
    if (input == "-")
      return "standard input in " + what;
    if (input.starts_with("-"))
      return fmt::format("an input named like an option ({}) in {}", input, what);
    if (isSupportedSource(input))
      kind.sources.push_back(i);
    else if (!link || !isLinkerInput(input))
      return fmt::format("{} in {}: not a C/C++ source{}", input, what,
                         link ? ", object or library" : "");
  }
  return {};
}

/// Why the options of a split call cannot be taken apart; empty when they
/// can. Values given through -Xclang and -Xpreprocessor count as options.
std::string checkOptions(std::span<const std::string> args, bool link, const CallKind& kind,
                         const std::string& what) {
  for (size_t i = 0; i < args.size(); ++i) {
    bool passed = kind.roles[i] == ArgRole::kValue && i > 0 &&
                  (args[i - 1] == "-Xclang" || args[i - 1] == "-Xpreprocessor");
    if ((kind.roles[i] == ArgRole::kOption || passed) && refusedOption(args[i], link))
      return fmt::format("{} in {}", args[i], what);
  }
  return {};
}

} // namespace

void planSplit(std::span<const std::string> args, bool compile, bool languageGiven,
               CallKind& kind) {
  bool link = !compile;
  std::string what = link ? "a compile-and-link" : "a compile of several sources";
  std::string reason = languageGiven ? "-x LANGUAGE in " + what : std::string();
  if (reason.empty())
    reason = checkInputs(args, link, kind, what);
  if (reason.empty() && kind.sources.empty())
    reason = "a link without sources";
  if (reason.empty() && compile && !kind.output.empty())
    reason = fmt::format("-o with {} sources (the compiler refuses it)", kind.sources.size());
  if (reason.empty())
    reason = checkOptions(args, link, kind, what);
  if (!reason.empty()) {
    kind.sources.clear();
    kind.reason = std::move(reason);
    return;
  }
  kind.split = true;
  kind.link = link;
}

std::string objectName(const std::string& source) {
  std::string_view name = fileName(source);
  return std::string(name.substr(0, name.rfind('.'))) + ".o";
}

std::string linkOutput(const CallKind& kind) {
  return kind.output.empty() ? "a.out" : kind.output;
}

std::vector<std::string> compileAlone(std::span<const std::string> args, const CallKind& kind,
                                      size_t k, const std::string& object) {
  std::vector<std::string> out;
  out.reserve(args.size() + 7);
  for (size_t i = 0; i < args.size(); ++i) {
    ArgRole role = kind.roles[i];
    if (role == ArgRole::kInput || role == ArgRole::kOutput ||
        (role == ArgRole::kOption && args[i] == "--"))
      continue;
    out.push_back(args[i]);
  }
  if (kind.link) {
    // The compiler's own compile job in a compile-and-link has this -dumpdir.
    out.insert(out.end(), {"-dumpdir", (kind.output.empty() ? "a" : kind.output) + "-",
                           "-Qunused-arguments", "-c"});
  }
  out.insert(out.end(), {args[kind.sources[k]], "-o", object});
  return out;
}

std::vector<std::string> linkWith(std::span<const std::string> args, const CallKind& kind,
                                  std::span<const std::string> objects) {
  std::vector<std::string> out(args.begin(), args.end());
  for (size_t k = 0; k < kind.sources.size() && k < objects.size(); ++k)
    out[kind.sources[k]] = objects[k];
  return out;
}

} // namespace mlgo::launch
