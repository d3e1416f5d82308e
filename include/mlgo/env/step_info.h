//===- mlgo/env/step_info.h - the fields of a step's info -------*- C++ -*-===//
///
/// \file
/// The `info` of a reset or step, listed once for every host: the server
/// writes it as JSON (server/step_reply.cc, both of its writers), the
/// Python core as a dict (python/src/convert.cc). Each host walks the
/// fields with visitStepInfo and a visitor of its own, so both carry the
/// same keys, in the same order, with the same values.
///
/// The fields, in order:
///   - while the episode runs: `context` (text), `observation_id` (int64);
///   - with a default decision: `default_action` (ActionValue),
///     `default_action_source` (text);
///   - on a reset with an IR2Vec vocabulary: `module_embedding` (numbers);
///   - on the final step, the summary: `policy_score`, `default_score`
///     (double), `observations`, `agent_steps`, `fallback_steps`,
///     `prefix_steps`, with fixed priorities `priority_answers` (uint64),
///     `channel_opened`, `baseline_cached` (bool),
///     `compile_seconds`, `compiler_cpu_seconds` (double), `contexts` (per
///     context visitContextScore's fields).
///
/// A visitor has one `field(std::string_view key, VALUE)` per value type:
/// std::string_view, int64_t, uint64_t, double, bool, const ActionValue&,
/// std::span<const double> and std::span<const ContextScore> (whose
/// elements it visits with visitContextScore, each as one object).
///
/// Pure functions of their arguments; no allocation of their own.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_STEP_INFO_H
#define MLGO_ENV_STEP_INFO_H

#include "mlgo/env/environment.h"

#include <span>
#include <string_view>

namespace mlgo::env {

/// The fields of one context's scores: `name`, `policy_score` and, when the
/// default compile reported the context, `default_score`.
template <typename Visitor> void visitContextScore(const ContextScore& c, Visitor& v) {
  v.field("name", std::string_view(c.name));
  v.field("policy_score", c.policy);
  if (c.baseline)
    v.field("default_score", *c.baseline);
}

/// Visits the info fields of `step` (see the file comment). `reset`: the
/// reset that returned `step` (its module embedding), null for a step.
/// `defaultActionSource`: EnvironmentDescription::defaultActionSource.
template <typename Visitor>
void visitStepInfo(const StepResult& step, const ResetResult* reset,
                   std::string_view defaultActionSource, Visitor& v) {
  if (!step.terminated && !step.truncated) {
    v.field("context", std::string_view(step.observation.context));
    v.field("observation_id", step.observation.id);
  }
  if (step.defaultAction) {
    v.field("default_action", *step.defaultAction);
    v.field("default_action_source", defaultActionSource);
  }
  if (reset && reset->moduleEmbedding)
    v.field("module_embedding", std::span<const double>(*reset->moduleEmbedding));
  if (!step.summary)
    return;
  const EpisodeSummary& s = *step.summary;
  v.field("policy_score", s.policyScore);
  v.field("default_score", s.defaultScore);
  v.field("observations", s.observations);
  v.field("agent_steps", s.agentSteps);
  v.field("fallback_steps", s.fallbackSteps);
  v.field("prefix_steps", s.prefixSteps);
  if (s.priorityAnswers != 0)
    v.field("priority_answers", s.priorityAnswers);
  v.field("channel_opened", s.channelOpened);
  v.field("baseline_cached", s.baselineCached);
  v.field("compile_seconds", s.compileSeconds);
  v.field("compiler_cpu_seconds", s.compilerCpuSeconds);
  v.field("contexts", std::span<const ContextScore>(s.contexts));
}

} // namespace mlgo::env

#endif // MLGO_ENV_STEP_INFO_H
