//===- trace/training_log_tracer.cc - traces from clang's own logs ----------===//
#include "training_log_tracer.h"

#include "context_rewards.h"
#include "dev_mode_probe.h"
#include "mlgo/corpus/command_line.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/run_compile.h"
#include "mlgo/env/score.h"
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/support/temp_dir.h"
#include "mlgo/trace/trace_header.h"
#include "module_trace.h"

#include <fstream>

namespace mlgo::trace {
namespace {

/// Feeds the log at `path` to `reader`, calling `onEvent` for each record.
template <typename F> Status readLogFile(const std::filesystem::path& path, F&& onEvent) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kNotFound, "clang wrote no training log {}", path.string());
  protocol::StreamReader reader;
  protocol::LogEvent event;
  for (;;) {
    auto space = reader.prepare(1 << 16);
    in.read(reinterpret_cast<char*>(space.data()), static_cast<std::streamsize>(space.size()));
    if (in.gcount() > 0)
      reader.commit(static_cast<size_t>(in.gcount()));
    else
      reader.finish();
    for (;;) {
      auto status = reader.next(event);
      if (!status.ok())
        return status.error().withContext(path.string());
      if (*status == protocol::ReadStatus::kEnd)
        return Status::success();
      if (*status == protocol::ReadStatus::kNeedMore)
        break;
      MLGO_TRY(onEvent(reader, event));
    }
  }
}

/// The compile of `spec` into `dir` with clang's training log (at `log`) on
/// and the arguments score `kind` reads: what episodes compile, plus the log.
Result<env::CompileCommand>
trainingLogCompile(env::Environment& environment, const corpus::ModuleSpec& spec,
                   const env::EnvironmentOptions& options, env::ScoreKind kind,
                   const std::filesystem::path& dir, const std::filesystem::path& log) {
  env::CompileCommand command;
  command.objectPath = dir / "out.o";
  if (env::scoreReadsRemarks(kind))
    command.remarksPath = dir / "remarks.opt";
  auto args = corpus::recompileArgs(spec, command.objectPath, options.flagRules);
  if (!args.ok())
    return args.error();
  command.argv.push_back(environment.describe().clangPath.string());
  command.argv.insert(command.argv.end(), args->begin(), args->end());
  for (std::string& arg : env::scoreArgs(kind, command.remarksPath, /*cc1=*/true))
    command.argv.push_back(std::move(arg));
  for (std::string& arg : trainingLogArgs(environment.problem(), log))
    command.argv.push_back(std::move(arg));
  command.environment = {"LLVM_DISABLE_SYMBOLIZATION=1"};
  return command;
}

} // namespace

Result<protocol::LogHeader> traceHeaderFromTrainingLog(const protocol::LogHeader& log) {
  if (log.features.empty())
    return makeError(ErrorCode::kUnsupported, "clang's training log has no features");
  const std::string& last = log.features.back().name();
  bool isAction = isKnownActionName(last) || (log.advice && log.advice->name() == last);
  if (!isAction)
    return makeError(ErrorCode::kUnsupported,
                     "clang's training log ends with feature '{}', not with a decision", last);
  std::vector<protocol::TensorSpec> observation(log.features.begin(), log.features.end() - 1);
  return makeTraceHeader(observation, log.features.back());
}

Result<TracedModule> traceModuleFromTrainingLog(env::Environment& environment,
                                                const std::string& module,
                                                const env::EnvironmentOptions& options,
                                                const protocol::LogHeader& header) {
  auto prepared = environment.prepareModule(module);
  if (!prepared.ok())
    return prepared.error();
  const corpus::ModuleSpec* spec = prepared->spec;
  auto dir =
      support::TempDir::create(environment.cleanupScope(), "mlgo-env-trace-", options.tempDir);
  if (!dir.ok())
    return dir.error();
  const env::Problem& problem = environment.problem();
  auto scoreKind = env::compileScoreKind(problem, options.problemOptions.regallocScore);
  if (!scoreKind.ok())
    return scoreKind.error();
  std::filesystem::path log = dir->path() / "training.log";
  auto command = trainingLogCompile(environment, *spec, options, *scoreKind, dir->path(), log);
  if (!command.ok())
    return command.error();
  auto report = env::runCompile(environment.cleanupScope(), *command, options.compileTimeout);
  if (!report.ok())
    return report.error().withContext(fmt::format("module {}", module));

  ModuleTraceBuilder builder(header, module);
  auto onEvent = [&](const protocol::StreamReader& reader, const protocol::LogEvent& event) {
    if (event.kind == protocol::EventKind::kHeader) {
      auto expected = traceHeaderFromTrainingLog(reader.header());
      if (!expected.ok() || *expected != header)
        return Status(makeError(ErrorCode::kCompiler,
                                "module {}: clang's training log header {} differs from the "
                                "probe's",
                                module, reader.header().toJson()));
    }
    if (event.kind != protocol::EventKind::kObservation)
      return Status::success();
    uint64_t actionBytes = header.features.back().byteSize();
    return builder.add(reader.context(), event.data.first(event.data.size() - actionBytes),
                       event.data.last(actionBytes));
  };
  MLGO_TRY(readLogFile(log, onEvent));
  auto score = env::scoreCompile(*scoreKind, *command);
  if (!score.ok())
    return score.error().withContext(fmt::format("module {}", module));
  env::EpisodeSummary summary;
  summary.policyScore = summary.defaultScore = score->total;
  for (const auto& [name, value] : score->contexts)
    summary.contexts.push_back({name, value, value});
  return finishTracedModule(builder, problem, module, summary);
}

} // namespace mlgo::trace
