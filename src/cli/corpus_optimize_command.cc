//===- src/cli/corpus_optimize_command.cc - corpus optimize ----------------===//
///
/// \file
/// `mlgo-env corpus optimize [--corpus=DIR] [--problem=regalloc] [env flags]`:
/// builds (or validates) every module's optimised IR in the optimised-IR
/// cache, so register allocation episodes start without building it
/// (mlgo/env/prepare_corpus.h). Exit codes: 0 done, 1 some module failed,
/// 2 bad command line.
///
//===----------------------------------------------------------------------===//
#include "cli/corpus_report.h"
#include "cli/env_options.h"
#include "cli/interrupt.h"

#include "mlgo/env/prepare_corpus.h"

#include <fmt/format.h>

#include <unistd.h>

#include <memory>

namespace mlgo::cli {
namespace {

int runOptimize(const EnvironmentFlags& flags, bool quiet) {
  auto options = flags.finish();
  if (!options.ok()) {
    std::fprintf(stderr, "mlgo-env corpus optimize: %s\n", options.error().message().c_str());
    return 2;
  }
  auto scope = std::make_shared<support::CleanupScope>();
  options->cleanup = scope;
  options->moduleEmbeddings = false;
  InterruptGuard interrupts("mlgo-env corpus optimize", *scope);
  auto environment = env::Environment::create(*options);
  if (!environment.ok())
    return corpusFail(environment.error());
  const env::EnvironmentDescription& d = (*environment)->describe();
  if (!d.optimizedIr)
    return corpusFail(makeError(ErrorCode::kInvalidArgument,
                                "problem {} {}: there is no optimised IR to prepare", d.problem,
                                options->fullCompile
                                    ? "with --full-compile compiles in full"
                                    : "makes decisions in the IR pipeline (only the register "
                                      "allocation problems compile optimised IR)"));
  size_t done = 0;
  bool progress = !quiet && ::isatty(STDERR_FILENO) == 1;
  auto onModule = [&](const std::string& module, const std::string& error) {
    ++done;
    if (!error.empty() && !scope->cleanupBegan())
      fmt::print(stderr, "{}failed: {}: {}\n", progress ? "\r\033[K" : "", module, error);
    if (progress)
      fmt::print(stderr, "\r\033[K{}/{} {}", done, d.corpusModules, module);
  };
  env::PrepareCorpusReport report = env::prepareCorpus(**environment, 0, onModule);
  if (progress)
    fmt::print(stderr, "\r\033[K");
  fmt::print("optimised IR of {} modules in {}: {} built, {} already cached, {} compiled in full "
             "(ThinLTO or driver commands), {} failed ({:.2f} s)\n",
             report.modules, d.optimizedIrDir.string(), report.built, report.reused,
             report.fullCompile, report.failures.size(), report.wallSeconds);
  return report.failures.empty() ? 0 : 1;
}

} // namespace

void addCorpusOptimizeCommand(CLI::App& corpusApp, Action& action) {
  static EnvironmentFlags flags;
  static bool quiet = false;
  flags.options.problem = "regalloc";
  CLI::App* cmd = corpusApp.add_subcommand(
      "optimize", "Build every module's optimised IR into the cache (beside --cache-dir's "
                  "baselines) that register allocation episodes compile from");
  flags.addTo(cmd);
  cmd->add_flag("--no-progress", quiet, "no progress line on stderr");
  cmd->callback([&action] { action = [] { return runOptimize(flags, quiet); }; });
}

} // namespace mlgo::cli
