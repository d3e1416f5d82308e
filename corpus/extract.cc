//===- corpus/extract.cc - building a corpus from objects -----------------===//
#include "mlgo/corpus/extract.h"

#include "mlgo/corpus/compile_entry.h"
#include "mlgo/corpus/description.h"

#include "file_util.h"
#include "object_list.h"

#include <atomic>
#include <mutex>
#include <regex>
#include <system_error>
#include <thread>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

/// Whether some single NUL-separated argument of `command` contains a match.
bool commandMatches(std::string_view command, const std::regex& filter) {
  std::size_t start = 0;
  while (start < command.size()) {
    std::size_t end = command.find('\0', start);
    if (end == std::string_view::npos)
      end = command.size();
    if (std::regex_search(command.begin() + static_cast<std::ptrdiff_t>(start),
                          command.begin() + static_cast<std::ptrdiff_t>(end), filter))
      return true;
    start = end + 1;
  }
  return false;
}

struct RunContext {
  const ExtractOptions& options;
  const std::optional<std::regex>& filter;
  std::vector<detail::ObjectJob>& jobs;
  std::vector<std::uint64_t>& written; ///< bitcode bytes per job
};

constexpr std::string_view kImportSuffix = ".3.import.bc";
constexpr std::string_view kIndexSuffix = ".thinlto.bc";

fs::path withSuffix(fs::path path, std::string_view suffix) {
  path += suffix;
  return path;
}

/// Writes `<outputDir>/<name><suffix>` for each (suffix, contents) pair.
Status
writeModuleFiles(const fs::path& outputDir, const std::string& name,
                 std::initializer_list<std::pair<std::string_view, const std::string*>> files) {
  for (const auto& [suffix, contents] : files)
    MLGO_TRY(detail::writeFileAtomic(withSuffix(outputDir / name, suffix), *contents));
  return Status::success();
}

/// Reads one ThinLTO artifact beside `object`; an issue if it is missing or
/// not bitcode.
Result<std::string> readThinLtoFile(const fs::path& object, std::string_view suffix,
                                    std::string_view flag) {
  fs::path path = withSuffix(object, suffix);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return makeError(ErrorCode::kNotFound,
                     "'{}' does not exist{}: link with -fuse-ld=lld -Wl,{} to produce it",
                     path.string(), fs::exists(object, ec) ? "" : " (nor does the object)", flag);
  Result<std::string> contents = detail::readFile(path, "ThinLTO file");
  if (contents && !contents->starts_with("BC\xC0\xDE"))
    return makeError(ErrorCode::kParse, "'{}' is not LLVM bitcode", path.string());
  return contents;
}

/// ThinLTO local: copies `<object>.3.import.bc` and `<object>.thinlto.bc`.
void extractThinLto(const RunContext& run, detail::ObjectJob& job, std::uint64_t& written) {
  Result<std::string> bitcode = readThinLtoFile(job.object, kImportSuffix, "--save-temps=import");
  if (!bitcode) {
    job.issue =
        ObjectIssue{job.object, ObjectProblem::kNoThinLtoBitcode, bitcode.error().message()};
    return;
  }
  Result<std::string> index =
      readThinLtoFile(job.object, kIndexSuffix, "--thinlto-emit-index-files");
  if (!index) {
    job.issue = ObjectIssue{
        job.object, ObjectProblem::kNoThinLtoIndex,
        fmt::format("module '{}' has no ThinLTO index: {}", job.name, index.error().message())};
    return;
  }
  if (Status status = writeModuleFiles(run.options.outputDir, job.name,
                                       {{".bc", &*bitcode}, {kIndexSuffix, &*index}});
      !status) {
    job.issue = ObjectIssue{job.object, ObjectProblem::kWriteFailed, status.error().message()};
    return;
  }
  written = bitcode->size();
}

/// Extracts one job; records an issue in the job on failure.
void extractOne(const RunContext& run, std::size_t index) {
  detail::ObjectJob& job = run.jobs[index];
  if (job.issue)
    return;
  if (run.options.thinLto == ThinLtoBuild::kLocal)
    return extractThinLto(run, job, run.written[index]);
  ObjectProblem problem = ObjectProblem::kUnreadable;
  Result<EmbeddedModule> module = readEmbeddedModule(job.object, &problem);
  if (!module) {
    job.issue = ObjectIssue{job.object, problem, module.error().message()};
    return;
  }
  if (run.filter && !commandMatches(module->command, *run.filter)) {
    job.issue =
        ObjectIssue{job.object, ObjectProblem::kFilteredOut,
                    fmt::format("'{}': no argument matches --cmd_filter", job.object.string())};
    return;
  }
  if (Status status = writeModuleFiles(run.options.outputDir, job.name,
                                       {{".bc", &module->bitcode}, {".cmd", &module->command}});
      !status) {
    job.issue = ObjectIssue{job.object, ObjectProblem::kWriteFailed, status.error().message()};
    return;
  }
  run.written[index] = module->bitcode.size();
}

Result<detail::ObjectList> listObjects(const ExtractOptions& options) {
  if (options.inputType == InputType::kDirectory) {
    if (options.thinLto == ThinLtoBuild::kLocal)
      return detail::objectsFromDirectory(options.input, options.objBaseDir, kImportSuffix,
                                          kImportSuffix);
    return detail::objectsFromDirectory(options.input, options.objBaseDir);
  }
  Result<std::string> json = detail::readFile(options.input, "compilation database");
  MLGO_TRY(json);
  return detail::objectsFromCompileCommands(*json, options.input.string(), options.objBaseDir);
}

Status checkOptions(const ExtractOptions& options) {
  if (options.thinLto == ThinLtoBuild::kLocal && options.cmdFilter)
    return makeError(ErrorCode::kInvalidArgument,
                     "--cmd_filter cannot be used with --thinlto_build=local: a ThinLTO module "
                     "has no embedded command to filter on");
  if (options.commandOverride) {
    for (const std::string& arg : *options.commandOverride)
      if (arg.find(kUnspecifiedOverride) != std::string::npos)
        return makeError(ErrorCode::kInvalidArgument,
                         "the command override contains the placeholder \"{}\"; give the clang "
                         "arguments the link's backend compiles used (e.g. -O2 -c), or omit "
                         "the override to fill it in later",
                         kUnspecifiedOverride);
  }
  return Status::success();
}

Result<std::optional<std::regex>> compileFilter(const std::optional<std::string>& pattern) {
  if (!pattern)
    return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(*pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--cmd_filter '{}' is not a valid regular "
                     "expression: {}",
                     *pattern, e.what());
  }
}

} // namespace

Result<ExtractSummary> extractCorpus(const ExtractOptions& options,
                                     const ExtractProgress& progress) {
  Result<std::optional<std::regex>> filter = compileFilter(options.cmdFilter);
  MLGO_TRY(filter);
  MLGO_TRY(checkOptions(options));
  Result<detail::ObjectList> listed = listObjects(options);
  MLGO_TRY(listed);
  std::vector<detail::ObjectJob>* jobs = &listed->jobs;
  detail::markDuplicates(*jobs);

  std::error_code ec;
  fs::create_directories(options.outputDir, ec);
  if (ec || !fs::is_directory(options.outputDir))
    return makeError(ErrorCode::kIo, "cannot create output directory '{}': {}",
                     options.outputDir.string(), ec ? ec.message() : "not a directory");

  std::vector<std::uint64_t> written(jobs->size(), 0);
  RunContext run{options, *filter, *jobs, written};
  unsigned workers =
      options.numWorkers ? options.numWorkers : std::max(1u, std::thread::hardware_concurrency());
  workers =
      static_cast<unsigned>(std::min<std::size_t>(workers, std::max<std::size_t>(1, jobs->size())));
  std::atomic<std::size_t> nextJob{0};
  std::size_t done = 0;
  std::mutex progressMutex;
  auto work = [&] {
    for (std::size_t i = nextJob++; i < run.jobs.size(); i = nextJob++) {
      extractOne(run, i);
      if (progress) {
        std::lock_guard lock(progressMutex);
        progress(++done, run.jobs.size());
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < workers; ++w) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {
        break; // no more threads available: the ones we have share the work
      }
    }
    work();
  } // joins

  ExtractSummary summary;
  summary.objects = jobs->size();
  summary.notes = std::move(listed->notes);
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    detail::ObjectJob& job = (*jobs)[i];
    if (job.issue) {
      summary.skipped.push_back(std::move(*job.issue));
      continue;
    }
    summary.modules.push_back(job.name);
    summary.bitcodeBytes += written[i];
  }
  CorpusDescription description;
  description.modules = summary.modules;
  description.hasThinLto = options.thinLto == ThinLtoBuild::kLocal;
  description.globalCommandOverride = options.commandOverride;
  if (description.hasThinLto && !description.globalCommandOverride) {
    description.globalCommandOverride = std::vector<std::string>{std::string(kUnspecifiedOverride)};
    summary.notes.push_back(fmt::format(
        "a ThinLTO corpus has no per-module commands: 'global_command_override' in {} holds "
        "the placeholder \"{}\"; replace it with the clang arguments of the link's backend "
        "compiles (e.g. [\"-O2\", \"-c\"]), or extract again with --cmd_override",
        (options.outputDir / kDescriptionFileName).string(), kUnspecifiedOverride));
  }
  MLGO_TRY(writeDescription(options.outputDir, description));
  return summary;
}

std::vector<std::string> splitCommandOverride(std::string_view text) {
  return splitShellWords(text);
}

Result<std::vector<std::string>> readCommandOverride(const fs::path& file) {
  Result<std::string> text = detail::readFile(file, "command override file");
  MLGO_TRY(text);
  std::vector<std::string> args = splitShellWords(*text);
  if (args.empty())
    return makeError(ErrorCode::kInvalidArgument, "command override file '{}' holds no argument",
                     file.string());
  return args;
}

} // namespace mlgo::corpus
