//===- trace/context_rewards.cc - scores and rewards per context ------------===//
#include "context_rewards.h"

#include "mlgo/env/score.h"
#include "mlgo/trace/trace_header.h"

namespace mlgo::trace {

bool perFunctionContexts(const env::Problem& problem) {
  return problem.scoreKind() == env::ScoreKind::kRegallocCost;
}

std::vector<ContextResult> contextResults(const env::Problem& problem, std::string_view module,
                                          const env::EpisodeSummary& summary,
                                          std::span<const std::string> functions) {
  std::vector<ContextResult> rows;
  if (perFunctionContexts(problem)) {
    rows.reserve(functions.size() + 1);
    for (const std::string& function : functions) {
      ContextResult row;
      row.context = contextName(module, function);
      for (const env::ContextScore& score : summary.contexts) {
        if (score.name != function)
          continue;
        row.policyScore = score.policy;
        row.defaultScore = score.baseline.value_or(0.0);
        break;
      }
      row.reward = env::relativeReward(row.policyScore, row.defaultScore);
      rows.push_back(std::move(row));
    }
  }
  ContextResult total;
  total.context = std::string(module);
  total.defaultScore = summary.defaultScore;
  total.policyScore = summary.policyScore;
  total.reward = env::relativeReward(summary.policyScore, summary.defaultScore);
  total.inTrace = !perFunctionContexts(problem);
  rows.push_back(std::move(total));
  return rows;
}

std::string csvHeader() {
  return "module,context,default_score,policy_score,reward\n";
}

void appendCsvField(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char c : field) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
}

void appendCsvRows(std::string& out, std::string_view module, std::span<const ContextResult> rows) {
  for (const ContextResult& row : rows) {
    appendCsvField(out, module);
    out += ',';
    appendCsvField(out, row.context);
    fmt::format_to(std::back_inserter(out), ",{},{},{}\n", row.defaultScore, row.policyScore,
                   row.reward);
  }
}

} // namespace mlgo::trace
