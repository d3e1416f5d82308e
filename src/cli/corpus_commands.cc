//===- src/cli/corpus_commands.cc - the corpus subcommands ---------------------===//
///
/// \file
/// `mlgo-env corpus extract|make|combine|info`, with mlgo-utils' option names
/// (`corpus build` lives in corpus_build_command.cc, `corpus optimize` in
/// corpus_optimize_command.cc).
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"
#include "cli/corpus_report.h"

#include "mlgo/corpus/corpus_info.h"
#include "mlgo/corpus/corpus_tools.h"
#include "mlgo/corpus/extract.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace mlgo::cli {

namespace {

int fail(const Error& error) {
  return corpusFail(error);
}

/// Redraws one progress line on stderr, at most ~10 times a second.
class ProgressLine {
public:
  void operator()(std::size_t done, std::size_t total) {
    auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_ < std::chrono::milliseconds(100))
      return;
    last_ = now;
    fmt::print(stderr, "\r[{}/{}] extracting{}", done, total, done == total ? "\n" : "");
    std::fflush(stderr);
  }

private:
  std::chrono::steady_clock::time_point last_{};
};

} // namespace

int corpusFail(const Error& error) {
  fmt::print(stderr, "mlgo-env corpus: error: {}\n", error.message());
  return 1;
}

void printExtractSummary(const corpus::ExtractSummary& summary,
                         const corpus::ExtractOptions& options) {
  fmt::print("extracted {} of {} objects ({:.1f} MiB of bitcode{}) into {}\n",
             summary.modules.size(), summary.objects,
             static_cast<double>(summary.bitcodeBytes) / (1024.0 * 1024.0),
             options.thinLto == corpus::ThinLtoBuild::kLocal ? ", ThinLTO" : "",
             options.outputDir.string());
  for (const std::string& note : summary.notes)
    fmt::print("note: {}\n", note);
  if (summary.skipped.empty())
    return;
  std::map<std::string_view, std::vector<const corpus::ObjectIssue*>> byReason;
  for (const corpus::ObjectIssue& issue : summary.skipped)
    byReason[corpus::objectProblemName(issue.problem)].push_back(&issue);
  fmt::print("skipped {}:\n", summary.skipped.size());
  constexpr std::size_t kShown = 10;
  for (const auto& [reason, issues] : byReason) {
    fmt::print("  {} ({}):\n", reason, issues.size());
    for (std::size_t i = 0; i < issues.size() && i < kShown; ++i)
      fmt::print("    {}\n", issues[i]->message);
    if (issues.size() > kShown)
      fmt::print("    ... and {} more\n", issues.size() - kShown);
  }
}

namespace {

void addExtract(CLI::App& corpusApp, Action& action) {
  struct Options {
    std::string input, inputType = "json", outputDir, cmdFilter, objBaseDir;
    std::string thinLtoBuild = "none", cmdOverride, cmdOverrideFile;
    unsigned numWorkers = std::max(1u, std::thread::hardware_concurrency());
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = corpusApp.add_subcommand(
      "extract", "Build a corpus from objects compiled with -Xclang -fembed-bitcode=all");
  cmd->add_option("--input", opts->input, "compile_commands.json, or a build directory")
      ->required();
  cmd->add_option("--input_type", opts->inputType, "json or directory")
      ->check(CLI::IsMember({"json", "directory"}))
      ->capture_default_str();
  cmd->add_option("--output_dir", opts->outputDir, "Corpus directory to write")->required();
  cmd->add_option("--num_workers", opts->numWorkers, "Parallel workers (default: cores)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--cmd_filter", opts->cmdFilter,
                  "Keep only modules with a cc1 argument matching this regex");
  cmd->add_option("--obj_base_dir", opts->objBaseDir,
                  "Directory object paths are relative to (default: each entry's directory, "
                  "or --input for directory input)");
  cmd->add_option("--thinlto_build", opts->thinLtoBuild,
                  "none, or local: take each object's .3.import.bc and .thinlto.bc from an lld "
                  "link with -Wl,--save-temps=import -Wl,--thinlto-emit-index-files")
      ->check(CLI::IsMember({"none", "local"}))
      ->capture_default_str();
  cmd->add_option("--cmd_override", opts->cmdOverride,
                  "clang arguments for every module (global_command_override), one string");
  cmd->add_option("--cmd_override_file", opts->cmdOverrideFile,
                  "file holding the clang arguments for every module");
  cmd->callback([opts, &action] {
    action = [opts] {
      corpus::ExtractOptions options;
      options.input = opts->input;
      options.inputType =
          opts->inputType == "directory" ? corpus::InputType::kDirectory : corpus::InputType::kJson;
      options.outputDir = opts->outputDir;
      options.numWorkers = opts->numWorkers;
      if (!opts->cmdFilter.empty())
        options.cmdFilter = opts->cmdFilter;
      if (!opts->objBaseDir.empty())
        options.objBaseDir = opts->objBaseDir;
      if (opts->thinLtoBuild == "local")
        options.thinLto = corpus::ThinLtoBuild::kLocal;
      if (!opts->cmdOverride.empty() && !opts->cmdOverrideFile.empty())
        return fail(makeError(ErrorCode::kInvalidArgument,
                              "give --cmd_override or --cmd_override_file, not both"));
      if (!opts->cmdOverride.empty())
        options.commandOverride = corpus::splitCommandOverride(opts->cmdOverride);
      if (!opts->cmdOverrideFile.empty()) {
        Result<std::vector<std::string>> args = corpus::readCommandOverride(opts->cmdOverrideFile);
        if (!args)
          return fail(args.error());
        options.commandOverride = std::move(*args);
      }
      corpus::ExtractProgress progress;
      if (::isatty(STDERR_FILENO))
        progress = ProgressLine();
      Result<corpus::ExtractSummary> summary = corpus::extractCorpus(options, progress);
      if (!summary)
        return fail(summary.error());
      printExtractSummary(*summary, options);
      if (summary->modules.empty()) {
        fmt::print(stderr, "mlgo-env corpus: error: no module was extracted\n");
        return 1;
      }
      return 0;
    };
  });
}

void addMake(CLI::App& corpusApp, Action& action) {
  struct Options {
    std::string inputDir, outputDir, defaultArgs;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = corpusApp.add_subcommand("make", "Make a corpus from a directory of .bc files");
  cmd->add_option("--input_dir", opts->inputDir, "Directory searched for .bc files")->required();
  cmd->add_option("--output_dir", opts->outputDir, "Corpus directory to write")->required();
  cmd->add_option("--default_args", opts->defaultArgs,
                  "Space-separated clang arguments stored as global_command_override");
  cmd->callback([opts, &action] {
    action = [opts] {
      std::vector<std::string> args;
      std::istringstream words(opts->defaultArgs);
      for (std::string word; words >> word;)
        args.push_back(word);
      Result<corpus::CorpusDescription> made =
          corpus::makeCorpus(opts->inputDir, opts->outputDir, args);
      if (!made)
        return fail(made.error());
      fmt::print("made a corpus of {} modules in {}\n", made->modules.size(), opts->outputDir);
      return 0;
    };
  });
}

void addCombine(CLI::App& corpusApp, Action& action) {
  auto rootDir = std::make_shared<std::string>();
  CLI::App* cmd = corpusApp.add_subcommand(
      "combine", "Combine the corpora in the subdirectories of a directory into one");
  cmd->add_option("--root_dir", *rootDir, "Directory whose subdirectories are corpora")->required();
  cmd->callback([rootDir, &action] {
    action = [rootDir] {
      Result<corpus::CorpusDescription> combined = corpus::combineCorpora(*rootDir);
      if (!combined)
        return fail(combined.error());
      fmt::print("combined {} modules into {}\n", combined->modules.size(), *rootDir);
      return 0;
    };
  });
}

void addInfo(CLI::App& corpusApp, Action& action) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = corpusApp.add_subcommand(
      "info", "Show a corpus's modules, sizes, flags, ThinLTO, and what keeps modules from "
              "compiling (exit 2 if anything does)");
  cmd->add_option("dir", *dir, "Corpus directory")->required();
  cmd->callback([dir, &action] {
    action = [dir] {
      Result<corpus::CorpusInfo> info = corpus::inspectCorpus(*dir);
      if (!info)
        return fail(info.error());
      fmt::print("{}", corpus::formatCorpusInfo(*info));
      return info->problems.empty() ? 0 : 2;
    };
  });
}

} // namespace

void addCorpusCommands(CLI::App& app, Action& action) {
  CLI::App* corpusApp = app.add_subcommand("corpus", "Build and manage training corpora");
  corpusApp->require_subcommand(1);
  addExtract(*corpusApp, action);
  addMake(*corpusApp, action);
  addCombine(*corpusApp, action);
  addInfo(*corpusApp, action);
  addCorpusBuildCommand(*corpusApp, action);
  addCorpusOptimizeCommand(*corpusApp, action);
}

} // namespace mlgo::cli
