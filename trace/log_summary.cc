//===- trace/log_summary.cc - summarising a log ------------------------------===//
#include "mlgo/trace/log_summary.h"

#include "mlgo/trace/log_printer.h"

#include <algorithm>
#include <vector>

namespace mlgo::trace {

void Statistics::add(double value) {
  min = count == 0 ? value : std::min(min, value);
  max = count == 0 ? value : std::max(max, value);
  ++count;
  nonZero += value != 0;
  sum += value;
}

Status SummaryVisitor::header(const protocol::LogHeader& header, std::string_view line) {
  summary_.header = header;
  auto metadata = readTraceMetadata(line);
  if (metadata.ok())
    summary_.metadata = std::move(*metadata);
  if (!header.features.empty()) {
    const std::string& last = header.features.back().name();
    bool named = !summary_.metadata.policy.empty() || !summary_.metadata.action.empty();
    if (named || isKnownActionName(last))
      summary_.actionFeature = last;
  }
  return Status::success();
}

Status SummaryVisitor::context(std::string_view name) {
  current_ = &contexts_[std::string(name)];
  return Status::success();
}

Status SummaryVisitor::observation(int64_t, std::span<const std::span<const std::byte>> tensors) {
  ++summary_.observations;
  ++current_->observations;
  current_->lastOutcome.reset();
  if (!summary_.actionFeature.empty()) {
    actionText_.clear();
    appendTensorText(actionText_, summary_.header.features.back(), tensors.back());
    ++summary_.actions[actionText_];
  }
  return Status::success();
}

Status SummaryVisitor::outcome(int64_t, std::span<const std::byte> score) {
  ++summary_.outcomes;
  const protocol::TensorSpec& spec = *summary_.header.score;
  double value =
      spec.elementCount() == 0 ? 0 : protocol::elementAsDouble(spec.type(), score.data(), 0);
  summary_.allOutcomes.add(value);
  current_->lastOutcome = value;
  return Status::success();
}

LogSummary SummaryVisitor::result() const {
  LogSummary summary = summary_;
  summary.contexts = contexts_.size();
  for (const auto& [name, state] : contexts_) {
    summary.emptyContexts += state.observations == 0;
    if (state.lastOutcome)
      summary.contextRewards.add(*state.lastOutcome);
  }
  return summary;
}

namespace {

std::vector<std::pair<std::string, uint64_t>> byCount(const LogSummary& summary) {
  std::vector<std::pair<std::string, uint64_t>> sorted(summary.actions.begin(),
                                                       summary.actions.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return sorted;
}

void appendStatsText(std::string& out, std::string_view label, const Statistics& s) {
  if (s.count == 0) {
    fmt::format_to(std::back_inserter(out), "{}: none\n", label);
    return;
  }
  fmt::format_to(std::back_inserter(out),
                 "{}: {} (non-zero {}), min {:.6g}, max {:.6g}, mean {:.6g}\n", label, s.count,
                 s.nonZero, s.min, s.max, s.mean());
}

void appendStatsJson(std::string& out, const Statistics& s) {
  fmt::format_to(std::back_inserter(out), "{{\"count\":{},\"non_zero\":{}", s.count, s.nonZero);
  if (s.count != 0)
    fmt::format_to(std::back_inserter(out), ",\"min\":{},\"max\":{},\"mean\":{}", s.min, s.max,
                   s.mean());
  out += '}';
}

} // namespace

std::string formatSummaryText(const LogSummary& summary, size_t topActions) {
  std::string out;
  if (!summary.metadata.problem.empty())
    fmt::format_to(std::back_inserter(out), "problem: {}\n", summary.metadata.problem);
  if (!summary.metadata.policy.empty())
    fmt::format_to(std::back_inserter(out), "policy: {}\n", summary.metadata.policy);
  fmt::format_to(std::back_inserter(out), "features: {}\n", summary.header.features.size());
  fmt::format_to(std::back_inserter(out), "contexts: {} ({} without observations)\n",
                 summary.contexts, summary.emptyContexts);
  fmt::format_to(std::back_inserter(out), "observations: {}\n", summary.observations);
  fmt::format_to(std::back_inserter(out), "outcomes: {}\n", summary.outcomes);
  if (summary.actionFeature.empty()) {
    out += "actions: none recorded (the last feature is not a decision)\n";
  } else {
    fmt::format_to(std::back_inserter(out), "actions ({}): {} distinct\n", summary.actionFeature,
                   summary.actions.size());
    auto sorted = byCount(summary);
    for (size_t i = 0; i < sorted.size() && i < topActions; ++i)
      fmt::format_to(std::back_inserter(out), "  {:>12}  {}\n", sorted[i].second, sorted[i].first);
    if (sorted.size() > topActions)
      fmt::format_to(std::back_inserter(out), "  ... {} more values\n", sorted.size() - topActions);
  }
  if (summary.header.score) {
    appendStatsText(out, "rewards per context", summary.contextRewards);
    appendStatsText(out, "all outcomes", summary.allOutcomes);
  } else {
    out += "rewards: none (the header has no score)\n";
  }
  return out;
}

std::string formatSummaryJson(const LogSummary& summary) {
  std::string out = "{";
  auto key = [&](std::string_view name) {
    if (out.size() > 1)
      out += ',';
    appendJsonString(out, name);
    out += ':';
  };
  key("problem");
  appendJsonString(out, summary.metadata.problem);
  key("policy");
  appendJsonString(out, summary.metadata.policy);
  key("features");
  out += std::to_string(summary.header.features.size());
  key("contexts");
  out += std::to_string(summary.contexts);
  key("empty_contexts");
  out += std::to_string(summary.emptyContexts);
  key("observations");
  out += std::to_string(summary.observations);
  key("outcomes");
  out += std::to_string(summary.outcomes);
  key("action_feature");
  appendJsonString(out, summary.actionFeature);
  key("actions");
  out += '{';
  bool first = true;
  for (const auto& [value, count] : byCount(summary)) {
    if (!first)
      out += ',';
    first = false;
    appendJsonString(out, value);
    fmt::format_to(std::back_inserter(out), ":{}", count);
  }
  out += '}';
  key("context_rewards");
  appendStatsJson(out, summary.contextRewards);
  key("outcome_values");
  appendStatsJson(out, summary.allOutcomes);
  out += "}\n";
  return out;
}

} // namespace mlgo::trace
