//===- trace/module_tracer.cc - one module through a policy -----------------===//
#include "module_tracer.h"

#include "action_codec.h"
#include "context_rewards.h"
#include "module_trace.h"

namespace mlgo::trace {

Result<env::StepResult> playEpisode(
    env::Environment& environment, const std::string& module, const DecisionFunction& decide,
    const std::function<Status(const env::StepResult&, const env::ActionValue&)>& observed) {
  auto reset = environment.reset({module, std::nullopt, {}});
  if (!reset.ok())
    return reset.error();
  env::EpisodeId episode = reset->episode;
  env::StepResult step = std::move(reset->step);
  auto abandon = [&](Error error) -> Error {
    (void)environment.close(episode); // Ends the episode and kills its clang.
    return error;
  };
  while (!step.terminated && !step.truncated) {
    auto action = decide(step);
    if (!action.ok())
      return abandon(std::move(action).error());
    if (observed) {
      if (auto st = observed(step, *action); !st.ok())
        return abandon(st.error());
    }
    // A failed step has ended the episode, except an invalid action, which
    // leaves it open: close it in every case (kNotFound is harmless).
    if (auto st = environment.step(episode, *action, step); !st.ok())
      return abandon(st.error());
  }
  if (!step.summary)
    return makeError(ErrorCode::kInternal, "module {}: the final step has no summary", module);
  return step;
}

Result<TracedModule> traceModule(env::Environment& environment, const std::string& module,
                                 const TracePolicy& policy, const protocol::LogHeader& header,
                                 std::string buffer) {
  const protocol::TensorSpec& actionSpec = header.features.back();
  ModuleTraceBuilder builder(header, module, std::move(buffer));
  std::vector<std::byte> actionBytes(actionSpec.byteSize());
  auto record = [&](const env::StepResult& step, const env::ActionValue& action) -> Status {
    MLGO_TRY(encodeAction(actionSpec, action, actionBytes));
    return builder.add(step.observation.context, step.observation.bytes, actionBytes);
  };
  auto decide = [&](const env::StepResult& step) { return policy.choose(step); };
  auto last = playEpisode(environment, module, decide, record);
  if (!last.ok())
    return last.error();

  return finishTracedModule(builder, environment.problem(), module, *last->summary);
}

Result<TracedModule> finishTracedModule(ModuleTraceBuilder& builder, const env::Problem& problem,
                                        std::string_view module,
                                        const env::EpisodeSummary& summary) {
  std::vector<ContextResult> rows = contextResults(problem, module, summary, builder.functions());
  TracedModule traced;
  auto records = builder.finish(rows);
  if (!records.ok())
    return records.error();
  traced.records = std::move(*records);
  appendCsvRows(traced.csv, module, rows);
  traced.observations = builder.observations();
  traced.contexts = builder.functions().size();
  traced.defaultScore = summary.defaultScore;
  traced.policyScore = summary.policyScore;
  return traced;
}

} // namespace mlgo::trace
