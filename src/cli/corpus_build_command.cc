//===- src/cli/corpus_build_command.cc - corpus build -----------------------===//
///
/// \file
/// `mlgo-env corpus build --output_dir=DIR [options] -- BUILD COMMAND...`:
/// runs the build with CC/CXX wrappers and compiler shims first on PATH,
/// and extracts its compiles (include/mlgo/corpus/build_capture.h). Exit
/// code 1 when the build failed, when nothing was compiled through the
/// wrappers (with the likely reasons) or when no module was extracted.
///
//===----------------------------------------------------------------------===//
#include "cli/corpus_report.h"
#include "cli/interrupt.h"

#include "mlgo/corpus/build_capture.h"
#include "mlgo/support/cleanup_scope.h"

#include <fmt/format.h>

#include <memory>
#include <thread>

namespace mlgo::cli {

namespace {

struct BuildOptions {
  std::vector<std::string> command;
  std::string outputDir, cc = "clang-22", cxx = "clang++-22", thinLtoBuild = "none";
  std::string cmdOverride, cmdOverrideFile, cmdFilter;
  unsigned numWorkers = std::max(1u, std::thread::hardware_concurrency());
};

int report(const corpus::BuildCaptureSummary& summary, const corpus::ExtractOptions& extract) {
  fmt::print("recorded {} compiles", summary.compiles);
  if (!summary.database.empty())
    fmt::print(" into {}", summary.database.string());
  if (summary.vanished)
    fmt::print(" (left out: {} configure checks, compiles whose source or directory is gone or "
               "that ran inside CMakeFiles/)",
               summary.vanished);
  fmt::print("\n");
  if (summary.compiles == 0) {
    fmt::print(stderr,
               "mlgo-env corpus: error: the build compiled nothing through the wrappers (CC, CXX "
               "and the compiler names put first on PATH); no corpus was written. Likely "
               "reasons:\n");
    for (const std::string& hint : summary.hints)
      fmt::print(stderr, "  - {}\n", hint);
    return 1;
  }
  printExtractSummary(summary.extract, extract);
  if (summary.buildExitCode != 0) {
    fmt::print(stderr,
               "mlgo-env corpus: error: the build failed (exit code {}); the corpus holds "
               "what it compiled before failing\n",
               summary.buildExitCode);
    return 1;
  }
  if (summary.extract.modules.empty()) {
    fmt::print(stderr, "mlgo-env corpus: error: no module was extracted\n");
    return 1;
  }
  return 0;
}

int runBuild(const BuildOptions& opts) {
  corpus::BuildCaptureOptions options;
  options.command = opts.command;
  options.cc = opts.cc;
  options.cxx = opts.cxx;
  corpus::ExtractOptions& extract = options.extract;
  extract.outputDir = opts.outputDir;
  extract.numWorkers = opts.numWorkers;
  if (opts.thinLtoBuild == "local")
    extract.thinLto = corpus::ThinLtoBuild::kLocal;
  if (!opts.cmdFilter.empty())
    extract.cmdFilter = opts.cmdFilter;
  if (!opts.cmdOverride.empty() && !opts.cmdOverrideFile.empty())
    return corpusFail(makeError(ErrorCode::kInvalidArgument,
                                "give --cmd_override or --cmd_override_file, not both"));
  if (!opts.cmdOverride.empty())
    extract.commandOverride = corpus::splitCommandOverride(opts.cmdOverride);
  if (!opts.cmdOverrideFile.empty()) {
    Result<std::vector<std::string>> args = corpus::readCommandOverride(opts.cmdOverrideFile);
    if (!args)
      return corpusFail(args.error());
    extract.commandOverride = std::move(*args);
  }
  support::CleanupScope scope; // Ctrl-C removes the wrappers and shims.
  InterruptGuard interrupts("mlgo-env corpus build", scope);
  options.cleanup = &scope;
  Result<corpus::BuildCaptureSummary> summary = corpus::captureBuild(options);
  if (!summary)
    return corpusFail(summary.error());
  return report(*summary, extract);
}

} // namespace

void addCorpusBuildCommand(CLI::App& corpusApp, Action& action) {
  auto opts = std::make_shared<BuildOptions>();
  CLI::App* cmd = corpusApp.add_subcommand(
      "build", "Run a build (after --) with CC/CXX wrappers that embed bitcode, and compiler "
               "names (cc, gcc, clang++-22, ...) first on PATH running them, then extract a "
               "corpus from its compiles");
  cmd->add_option("--output_dir", opts->outputDir, "Corpus directory to write")->required();
  cmd->add_option("--cc", opts->cc, "C compiler the wrapper runs")->capture_default_str();
  cmd->add_option("--cxx", opts->cxx, "C++ compiler the wrapper runs")->capture_default_str();
  cmd->add_option("--thinlto_build", opts->thinLtoBuild,
                  "none, or local: compile with -flto=thin and link with lld's "
                  "--save-temps=import --thinlto-emit-index-files")
      ->check(CLI::IsMember({"none", "local"}))
      ->capture_default_str();
  cmd->add_option("--cmd_override", opts->cmdOverride,
                  "clang arguments for every module (global_command_override), one string");
  cmd->add_option("--cmd_override_file", opts->cmdOverrideFile,
                  "file holding the clang arguments for every module");
  cmd->add_option("--cmd_filter", opts->cmdFilter,
                  "Keep only modules with a cc1 argument matching this regex");
  cmd->add_option("--num_workers", opts->numWorkers, "Parallel extraction workers")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("command", opts->command, "The build command, after --")->required();
  cmd->callback([opts, &action] { action = [opts] { return runBuild(*opts); }; });
}

} // namespace mlgo::cli
