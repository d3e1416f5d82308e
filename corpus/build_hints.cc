//===- corpus/build_hints.cc - why a build compiled nothing ---------------===//
#include "build_hints.h"

#include "mlgo/support/compiler_shims.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string_view>
#include <system_error>

namespace mlgo::corpus::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxDirs = 16, kMaxRead = 1 << 20, kMaxPathsShown = 3;
constexpr std::string_view kBuildFiles[] = {"Makefile", "makefile", "GNUmakefile", "build.ninja"};

/// At most kMaxRead bytes of `path`; "" when it cannot be read.
std::string readHead(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(kMaxRead, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return text;
}

/// The working directory, then the directories the command names
/// (`-C d`, `-Cd`, `--directory=d`, `--build b`), each once.
std::vector<fs::path> buildDirs(const BuildOutcome& outcome) {
  std::vector<fs::path> dirs = {outcome.workDir};
  std::set<fs::path> seen = {outcome.workDir.lexically_normal()};
  for (std::size_t i = 1; i < outcome.command.size() && dirs.size() < kMaxDirs; ++i) {
    std::string_view arg = outcome.command[i];
    if (arg.starts_with("-C") && arg.size() > 2)
      arg.remove_prefix(2);
    else if (arg.starts_with("-") && arg.find('=') != std::string_view::npos)
      arg.remove_prefix(arg.find('=') + 1);
    if (arg.empty() || arg.starts_with("-"))
      continue;
    fs::path dir = (outcome.workDir / fs::path(arg)).lexically_normal();
    std::error_code ec;
    if (fs::is_directory(dir, ec) && seen.insert(dir).second)
      dirs.push_back(dir);
  }
  return dirs;
}

/// Distinct absolute paths in `text` whose last part is a shimmed compiler
/// name, at most kMaxPathsShown.
std::vector<std::string> absoluteCompilers(std::string_view text,
                                           const std::set<std::string, std::less<>>& names) {
  constexpr std::string_view kSeparators = " \t\r\n\"'`=;:,()";
  std::vector<std::string> found;
  std::size_t at = 0;
  while (found.size() < kMaxPathsShown && at < text.size()) {
    std::size_t start = text.find_first_not_of(kSeparators, at);
    if (start == std::string_view::npos)
      break;
    std::size_t end = std::min(text.find_first_of(kSeparators, start), text.size());
    std::string_view word = text.substr(start, end - start);
    at = end;
    std::size_t slash = word.rfind('/');
    if (word.starts_with('/') && names.contains(word.substr(slash + 1)) &&
        std::find(found.begin(), found.end(), word) == found.end())
      found.emplace_back(word);
  }
  return found;
}

/// The value of `key` in a CMakeCache.txt ("KEY:TYPE=value"), or "".
std::string cacheValue(std::string_view cache, std::string_view key) {
  std::string needle = fmt::format("\n{}:", key);
  std::size_t at = cache.find(needle);
  if (at == std::string_view::npos)
    return {};
  std::size_t eq = cache.find('=', at + needle.size());
  std::size_t eol = cache.find('\n', at + needle.size());
  if (eq == std::string_view::npos || eq > eol)
    return {};
  return std::string(cache.substr(eq + 1, eol == std::string_view::npos ? eol : eol - eq - 1));
}

std::string cmakeHint(const fs::path& cacheFile) {
  std::string cache = "\n" + readHead(cacheFile);
  std::string c = cacheValue(cache, "CMAKE_C_COMPILER"),
              cxx = cacheValue(cache, "CMAKE_CXX_COMPILER");
  std::string which = c.empty() && cxx.empty() ? "its compilers"
                      : cxx.empty()            ? fmt::format("C compiler {}", c)
                      : c.empty()              ? fmt::format("C++ compiler {}", cxx)
                                  : fmt::format("C compiler {} and C++ compiler {}", c, cxx);
  return fmt::format("{}: this CMake build directory was configured before, with {}, which CMake "
                     "keeps and calls by absolute path: configure a fresh build directory inside "
                     "the command (-- sh -c 'cmake -S . -B fresh && cmake --build fresh')",
                     cacheFile.string(), which);
}

/// What the build's files and command show (see the header).
std::vector<std::string> foundInBuild(const BuildOutcome& outcome, bool& absoluteSeen) {
  std::set<std::string, std::less<>> names;
  for (const support::CompilerShimName& shim : support::compilerShimNames(support::hostMachine()))
    names.insert(shim.name);
  std::vector<std::string> hints;
  auto noteAbsolute = [&](const std::string& where, std::string_view text) {
    std::vector<std::string> paths = absoluteCompilers(text, names);
    if (paths.empty())
      return;
    absoluteSeen = true;
    hints.push_back(fmt::format(
        "{} names a compiler by absolute path ({}), which the compiler names on PATH cannot "
        "catch: name it cc/c++ instead (in the file, or on make's command line when the file "
        "uses $(CC)/$(CXX): make CC=cc CXX=c++)",
        where, fmt::join(paths, ", ")));
  };
  std::string commandText;
  for (const std::string& arg : outcome.command)
    commandText += arg + " ";
  noteAbsolute("the build command", commandText);
  for (const fs::path& dir : buildDirs(outcome)) {
    std::error_code ec;
    bool cmake = fs::exists(dir / "CMakeCache.txt", ec);
    if (cmake) {
      hints.push_back(cmakeHint(dir / "CMakeCache.txt"));
      absoluteSeen = true; // Said there: CMake calls them by absolute path.
    } else if (fs::exists(dir / "build.ninja", ec))
      hints.push_back(fmt::format(
          "{}: generated before (Meson, GN, ...), with its compilers written in: generate a "
          "fresh build directory inside the command",
          (dir / "build.ninja").string()));
    for (std::string_view name : kBuildFiles) {
      if (!cmake && fs::is_regular_file(dir / name, ec))
        noteAbsolute((dir / name).string(), readHead(dir / name));
    }
  }
  return hints;
}

} // namespace

std::vector<std::string> explainNothingCaught(const BuildOutcome& outcome) {
  std::vector<std::string> hints;
  if (outcome.exitCode != 0)
    hints.push_back(fmt::format("the build failed (exit code {}), maybe before compiling "
                                "anything: see its output above",
                                outcome.exitCode));
  if (outcome.vanished != 0)
    hints.push_back(fmt::format("{} compile(s) came through, all configure checks (in "
                                "directories now gone or inside CMakeFiles/): the build's own "
                                "compiles did not",
                                outcome.vanished));
  bool absoluteSeen = false;
  std::vector<std::string> found = foundInBuild(outcome, absoluteSeen);
  hints.insert(hints.end(), found.begin(), found.end());
  if (outcome.exitCode == 0)
    hints.push_back("the build was up to date already, with nothing left to compile: clean it "
                    "first (make clean, or a fresh build directory) and run again");
  if (!absoluteSeen)
    hints.push_back("compilers called by absolute path (/usr/bin/gcc) bypass PATH: name them "
                    "cc/c++ instead (in the build's files, or on make's command line: make CC=cc "
                    "CXX=c++)");
  hints.push_back("a compiler server started outside the build (sccache, icecc, distcc's pump) "
                  "compiles with its own environment: turn it off for this build");
  return hints;
}

} // namespace mlgo::corpus::detail
