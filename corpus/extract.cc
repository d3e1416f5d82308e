//===- corpus/extract.cc - building a corpus from objects -----------------===//
#include "mlgo/corpus/extract.h"

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

/// Extracts one job; records an issue in the job on failure.
void extractOne(const RunContext& run, std::size_t index) {
  detail::ObjectJob& job = run.jobs[index];
  if (job.issue)
    return;
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
  fs::path base = run.options.outputDir / job.name;
  for (auto [suffix, contents] :
       {std::pair<const char*, const std::string*>{".bc", &module->bitcode},
        {".cmd", &module->command}}) {
    fs::path path = base;
    path += suffix;
    if (Status status = detail::writeFileAtomic(path, *contents); !status) {
      job.issue = ObjectIssue{job.object, ObjectProblem::kWriteFailed, status.error().message()};
      return;
    }
  }
  run.written[index] = module->bitcode.size();
}

Result<std::vector<detail::ObjectJob>> listObjects(const ExtractOptions& options) {
  if (options.inputType == InputType::kDirectory)
    return detail::objectsFromDirectory(options.input, options.objBaseDir);
  Result<std::string> json = detail::readFile(options.input, "compilation database");
  MLGO_TRY(json);
  return detail::objectsFromCompileCommands(*json, options.input.string(), options.objBaseDir);
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
  Result<std::vector<detail::ObjectJob>> jobs = listObjects(options);
  MLGO_TRY(jobs);
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
  MLGO_TRY(writeDescription(options.outputDir, description));
  return summary;
}

} // namespace mlgo::corpus
