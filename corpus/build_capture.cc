//===- corpus/build_capture.cc - a corpus from a build --------------------===//
#include "mlgo/corpus/build_capture.h"
#include "mlgo/corpus/compile_entry.h"

#include "build_hints.h"
#include "file_util.h"

#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/compiler_shims.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kScratchName = ".mlgo-corpus-build";

/// `<output>/.mlgo-corpus-build`: the wrappers, the shims and the records,
/// created afresh (a leftover of an interrupted run is removed), registered
/// in the cleanup scope when there is one, and removed on destruction.
class ScratchDir {
public:
  static Result<ScratchDir> create(const fs::path& outputDir, support::CleanupScope* scope) {
    auto make = [&]() -> Result<fs::path> {
      std::error_code ec;
      fs::path path = fs::absolute(outputDir / kScratchName, ec);
      if (!ec)
        fs::remove_all(path, ec);
      if (!ec)
        fs::create_directories(path / "records", ec);
      if (ec)
        return makeError(ErrorCode::kIo, "cannot create the directory '{}': {}",
                         (outputDir / kScratchName).string(), ec.message());
      return path;
    };
    Result<fs::path> path = scope ? scope->createPath(make) : make();
    MLGO_TRY(path);
    ScratchDir dir;
    dir.path_ = std::move(*path);
    dir.scope_ = scope;
    return dir;
  }
  ScratchDir() = default;
  ScratchDir(ScratchDir&& other) noexcept
      : path_(std::exchange(other.path_, {})), scope_(other.scope_) {}
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    if (path_.empty())
      return;
    fs::remove_all(path_, ec);
    if (scope_)
      scope_->removePath(path_);
  }
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
  support::CleanupScope* scope_ = nullptr;
};

/// `program` itself if it has a '/', else the first executable in `path`
/// (a PATH value; null = none).
Result<fs::path> findProgram(const fs::path& program, const char* path) {
  if (program.string().find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0)
      return fs::absolute(program);
  } else if (path != nullptr) {
    std::string_view dirs(path);
    while (!dirs.empty()) {
      std::size_t colon = dirs.find(':');
      fs::path candidate = fs::path(std::string(dirs.substr(0, colon))) / program;
      if (::access(candidate.c_str(), X_OK) == 0)
        return fs::absolute(candidate);
      dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    }
  }
  return makeError(ErrorCode::kNotFound, "program '{}' not found (or not executable)",
                   program.string());
}

/// The wrapper script for `compiler` (see the file comment of the header).
std::string wrapperScript(const fs::path& compiler, const fs::path& logDir, bool thinLto) {
  std::string cc = support::shellQuote(compiler.string());
  std::string compileFlags = thinLto ? "-flto=thin" : "-Xclang -fembed-bitcode=all";
  std::string linkFlags = thinLto ? "-flto=thin -fuse-ld=lld -Wl,--save-temps=import "
                                    "-Wl,--thinlto-emit-index-files"
                                  : "";
  return fmt::format(R"(#!/bin/sh
# Written by mlgo-env corpus build: records each compile, adds the corpus flags.
c=0; other=0
for a in "$@"; do
  case "$a" in
    -c) c=1 ;;
    -E|-S|-M|-MM|-fsyntax-only) other=1 ;;
    @?*)
      r=${{a#@}}
      if [ -r "$r" ]; then
        grep -Eq -- '(^|[[:space:]])-c([[:space:]]|$)' "$r" && c=1
        grep -Eq -- '(^|[[:space:]])(-E|-S|-M|-MM|-fsyntax-only)([[:space:]]|$)' "$r" && other=1
      fi ;;
  esac
done
if [ "$c" = 1 ] && [ "$other" = 0 ]; then
  if f=$(mktemp {log}/compile.XXXXXXXXXX); then
    printf '%s\0' "$PWD" {cc} "$@" > "$f"
    n=0
    for a in "$@"; do
      case "$a" in
        @?*) n=$((n+1)); cat -- "${{a#@}}" > "$f.rsp$n" 2>/dev/null || rm -f "$f.rsp$n" ;;
      esac
    done
  fi
  exec {cc} {compile} "$@"
fi
if [ "$c" = 0 ] && [ "$other" = 0 ]; then
  exec {cc} {link} "$@"
fi
exec {cc} "$@"
)",
                     fmt::arg("log", support::shellQuote(logDir.string())), fmt::arg("cc", cc),
                     fmt::arg("compile", compileFlags), fmt::arg("link", linkFlags));
}

Status writeWrapper(const fs::path& path, const std::string& script) {
  MLGO_TRY(detail::writeFileAtomic(path, script));
  if (::chmod(path.c_str(), 0755) != 0)
    return makeError(ErrorCode::kIo, "cannot make '{}' executable: {}", path.string(),
                     std::generic_category().message(errno));
  return Status::success();
}

/// The build's environment: this process's, with CC and CXX set to the
/// wrappers, PATH starting with the shims, and ccache turned off.
std::vector<std::string> buildEnvironment(const fs::path& scratch, const std::string& path) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (!entry.starts_with("CC=") && !entry.starts_with("CXX=") && !entry.starts_with("PATH=") &&
        !entry.starts_with("CCACHE_DISABLE="))
      env.emplace_back(entry);
  }
  env.push_back("CC=" + (scratch / "cc").string());
  env.push_back("CXX=" + (scratch / "c++").string());
  env.push_back("PATH=" + path);
  env.push_back("CCACHE_DISABLE=1");
  return env;
}

/// Runs `command` (argv[0] looked up in `path`, the build's PATH) in
/// `env`; returns its exit code (128 + signal when killed).
Result<int> runBuild(const std::vector<std::string>& command, const std::string& path,
                     std::vector<std::string> env) {
  Result<fs::path> program = findProgram(command.front(), path.c_str());
  if (!program)
    return makeError(ErrorCode::kNotFound, "cannot run the build command '{}': not found in PATH",
                     command.front());
  std::vector<char*> envp, argv;
  for (std::string& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, program->c_str(), nullptr, nullptr, argv.data(), envp.data());
      rc != 0)
    return makeError(rc == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     "cannot run the build command '{}': {}", command.front(),
                     std::generic_category().message(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return makeError(ErrorCode::kIo, "waiting for the build failed: {}",
                       std::generic_category().message(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Whether a source of the recorded compile `args` is gone (`directory`
/// holds the relative ones): a configure check's scratch file.
bool sourceGone(const std::vector<std::string>& args, const fs::path& directory) {
  std::error_code ec;
  for (std::size_t i : sourceArguments(args))
    if (!fs::exists(directory / args[i], ec))
      return true;
  return false;
}

/// `args` (argv[0] the compiler) with each `@file` replaced by the words of
/// the copy the wrapper saved when the compile ran (`<record>.rsp<N>`, N
/// counting them from 1): Ninja deletes its response files after the
/// command. An `@file` without a copy stays as it is.
std::vector<std::string> inlineResponseFiles(std::vector<std::string> args,
                                             const fs::path& record) {
  std::vector<std::string> out;
  int n = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i == 0 || args[i].size() < 2 || args[i].front() != '@') {
      out.push_back(std::move(args[i]));
      continue;
    }
    fs::path copy = record;
    copy += ".rsp" + std::to_string(++n);
    Result<std::string> words = detail::readFile(copy, "response file copy");
    if (!words) {
      out.push_back(std::move(args[i]));
      continue;
    }
    for (std::string& word : splitShellWords(*words))
      out.push_back(std::move(word));
  }
  return out;
}

/// Whether `directory` lies inside a `CMakeFiles` directory: where CMake runs
/// its configure checks (try_compile scratch projects, check_ipo_supported's
/// _CMakeLTOTest-*), and never a build's own compiles.
bool insideCMakeFiles(const fs::path& directory) {
  return std::any_of(directory.begin(), directory.end(),
                     [](const fs::path& part) { return part == "CMakeFiles"; });
}

struct Records {
  llvm::json::Array entries;
  std::size_t vanished = 0;
};

/// Reads every record under `logDir` into database entries, sorted.
Result<Records> readRecords(const fs::path& logDir) {
  std::vector<std::pair<std::string, std::vector<std::string>>> compiles; // (dir, args)
  Records records;
  std::error_code ec;
  for (const fs::directory_entry& file : fs::directory_iterator(logDir, ec)) {
    std::string name = file.path().filename().string();
    if (std::count(name.begin(), name.end(), '.') > 1)
      continue; // a response file's copy (`compile.XXXXXXXXXX.rspN`), read with its record
    Result<std::string> text = detail::readFile(file.path(), "compile record");
    MLGO_TRY(text);
    std::vector<std::string> fields;
    for (std::size_t start = 0; start < text->size();) {
      std::size_t end = text->find('\0', start);
      if (end == std::string::npos)
        break; // a record cut short (its compile was interrupted): ignore the tail
      fields.push_back(text->substr(start, end - start));
      start = end + 1;
    }
    if (fields.size() < 3)
      continue;
    std::string directory = std::move(fields.front());
    fields.erase(fields.begin());
    fields = inlineResponseFiles(std::move(fields), file.path());
    std::error_code gone;
    if (!fs::is_directory(directory, gone) || sourceGone(fields, directory) ||
        insideCMakeFiles(directory)) {
      ++records.vanished;
      continue;
    }
    compiles.emplace_back(std::move(directory), std::move(fields));
  }
  if (ec)
    return makeError(ErrorCode::kIo, "cannot list the compile records in '{}': {}", logDir.string(),
                     ec.message());
  std::sort(compiles.begin(), compiles.end());
  for (auto& [directory, args] : compiles) {
    llvm::json::Array arguments;
    for (std::string& a : args)
      arguments.push_back(std::move(a));
    records.entries.push_back(
        llvm::json::Object{{"directory", directory}, {"arguments", std::move(arguments)}});
  }
  return records;
}

Status writeDatabase(const fs::path& path, llvm::json::Array entries) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(entries))) << "\n";
  out.flush();
  return detail::writeFileAtomic(path, text);
}

/// The real compiler `name`, by absolute path (looked up in this process's
/// PATH, before the shims are put in front), outside the scratch directory.
Result<fs::path> realCompiler(const fs::path& name, const fs::path& outputDir) {
  Result<fs::path> compiler = findProgram(name, std::getenv("PATH"));
  MLGO_TRY(compiler);
  std::error_code ec;
  fs::path scratch = fs::absolute(outputDir / kScratchName, ec).lexically_normal();
  fs::path rel = compiler->lexically_normal().lexically_relative(scratch);
  if (!rel.empty() && *rel.begin() != "..")
    return makeError(ErrorCode::kInvalidArgument,
                     "the compiler '{}' is '{}', inside the scratch directory of corpus build (a "
                     "PATH left from another run?): name the real compiler with --cc/--cxx",
                     name.string(), compiler->string());
  return compiler;
}

/// Shims `ar` and `ranlib` in `bin` running llvm-ar and llvm-ranlib from the
/// real compiler's own directory (nothing when it has none): the objects carry
/// bitcode, and GNU ar indexes such members through /usr/lib/bfd-plugins,
/// where an older LLVMgold (Debian's llvm-14) fails on clang-22's bitcode and
/// leaves the archive without symbols, so the build's links fail.
Status writeArchiverShims(const fs::path& bin, const fs::path& cc) {
  std::error_code ec;
  fs::path dir = fs::canonical(cc, ec).parent_path();
  if (ec)
    return Status::success();
  for (auto [name, tool] : {std::pair{"ar", "llvm-ar"}, std::pair{"ranlib", "llvm-ranlib"},
                            std::pair{"nm", "llvm-nm"}}) {
    fs::path real = dir / tool;
    if (::access(real.c_str(), X_OK) != 0)
      continue;
    MLGO_TRY(writeWrapper(bin / name, fmt::format("#!/bin/sh\n# Written by mlgo-env corpus "
                                                  "build: bitcode-aware archiver.\nexec {} \"$@\"\n",
                                                  support::shellQuote(real.string()))));
  }
  return Status::success();
}

/// Writes the wrappers `cc` and `c++` and the shim directory `bin/` into
/// the scratch directory.
Status writeWrappers(const fs::path& scratch, const fs::path& cc, const fs::path& cxx,
                     bool thinLto) {
  fs::path logDir = scratch / "records";
  MLGO_TRY(writeWrapper(scratch / "cc", wrapperScript(cc, logDir, thinLto)));
  MLGO_TRY(writeWrapper(scratch / "c++", wrapperScript(cxx, logDir, thinLto)));
  support::CompilerShimOptions shims;
  shims.cCommand = {(scratch / "cc").string()};
  shims.cxxCommand = {(scratch / "c++").string()};
  MLGO_TRY(support::writeCompilerShims(scratch / "bin", shims));
  return writeArchiverShims(scratch / "bin", cc);
}

} // namespace

Result<BuildCaptureSummary> captureBuild(const BuildCaptureOptions& options) {
  if (options.command.empty())
    return makeError(ErrorCode::kInvalidArgument, "no build command given (put it after --)");
  Result<fs::path> cc = realCompiler(options.cc, options.extract.outputDir);
  MLGO_TRY(cc);
  Result<fs::path> cxx = realCompiler(options.cxx, options.extract.outputDir);
  MLGO_TRY(cxx);
  Result<ScratchDir> scratch = ScratchDir::create(options.extract.outputDir, options.cleanup);
  MLGO_TRY(scratch);
  const fs::path& dir = scratch->path();
  MLGO_TRY(writeWrappers(dir, *cc, *cxx, options.extract.thinLto == ThinLtoBuild::kLocal));

  BuildCaptureSummary summary;
  std::string path = support::shimmedPath(dir / "bin", std::getenv("PATH"));
  Result<int> exitCode = runBuild(options.command, path, buildEnvironment(dir, path));
  MLGO_TRY(exitCode);
  summary.buildExitCode = *exitCode;
  Result<Records> records = readRecords(dir / "records");
  MLGO_TRY(records);
  summary.compiles = records->entries.size();
  summary.vanished = records->vanished;
  if (summary.compiles == 0) { // Nothing to write: an earlier corpus there stays as it was.
    std::error_code ec;
    summary.hints = detail::explainNothingCaught(
        {options.command, fs::current_path(ec), summary.buildExitCode, summary.vanished});
    return summary;
  }

  summary.database = options.extract.outputDir / "compile_commands.json";
  MLGO_TRY(writeDatabase(summary.database, std::move(records->entries)));
  ExtractOptions extract = options.extract;
  extract.input = summary.database;
  extract.inputType = InputType::kJson;
  Result<ExtractSummary> extracted = extractCorpus(extract);
  MLGO_TRY(extracted);
  summary.extract = std::move(*extracted);
  return summary;
}

} // namespace mlgo::corpus
