//===- src/cli/policy_commands.cc - mlgo-env policy check|decide -------------===//
///
/// `mlgo-env policy check FILE [--problem=P]` validates a policy file and
/// describes it; `mlgo-env policy decide --policy=FILE LOG` prints what the
/// policy answers to every observation of a trace (context, observation
/// number, action; tab-separated), the C++ runner's side of the parity check
/// with the Python one. Exit codes: 0, 1 (bad policy or log), 2 (usage).
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"

#include "mlgo/policy/policy_runner.h"
#include "mlgo/trace/policy_decisions.h"

#include <cstdio>
#include <string>

namespace mlgo::cli {
namespace {

struct PolicyFlags {
  std::string file;
  std::string problem;
  std::string log;
};

int failure(const Error& error) {
  std::fprintf(stderr, "mlgo-env: %s\n", error.message().c_str());
  return 1;
}

/// The policy file, checked against --problem when one is given.
Result<policy::Policy> loadPolicy(const PolicyFlags& flags) {
  auto policy = policy::Policy::load(flags.file);
  if (!policy.ok() || flags.problem.empty())
    return policy;
  if (Status st = policy->checkProblem(flags.problem); !st.ok())
    return st.error();
  return policy;
}

int runCheck(const PolicyFlags& flags) {
  auto policy = loadPolicy(flags);
  if (!policy.ok())
    return failure(policy.error());
  std::string features;
  for (const std::string& f : policy->features())
    features += (features.empty() ? "" : ", ") + f;
  std::printf("%s: version %d, problem %s, decision %s\n  features (%zu): %s\n",
              policy->where().c_str(), policy->version(), policy->problem().c_str(),
              std::string(policy::spelling(policy->decision())).c_str(), policy->features().size(),
              features.c_str());
  return 0;
}

int runDecide(const PolicyFlags& flags) {
  auto policy = loadPolicy(flags);
  if (!policy.ok())
    return failure(policy.error());
  std::string line;
  Status st = trace::decideOverLog(flags.log, *policy, [&](const trace::PolicyDecision& d) {
    line.assign(d.context);
    line += fmt::format("\t{}\t{}\n", d.id, d.action);
    std::fputs(line.c_str(), stdout);
    return Status::success();
  });
  std::fflush(stdout);
  return st.ok() ? 0 : failure(st.error());
}

} // namespace

void addPolicyCommands(CLI::App& app, Action& action) {
  static PolicyFlags flags;
  auto* policy = app.add_subcommand("policy", "check policy files and run them over traces");
  policy->require_subcommand(1);
  auto* check = policy->add_subcommand("check", "validate a policy file and describe it");
  check->add_option("file", flags.file, "the policy file")->required();
  check->add_option("--problem", flags.problem, "fail unless the policy is for this problem");
  check->callback([&action] { action = [] { return runCheck(flags); }; });
  auto* decide = policy->add_subcommand(
      "decide", "print the policy's answer to every observation of a trace (context, number, "
                "action)");
  decide->add_option("--policy", flags.file, "the policy file")->required();
  decide->add_option("log", flags.log, "the trace or log (- = standard input)")->required();
  decide->add_option("--problem", flags.problem, "fail unless the policy is for this problem");
  decide->callback([&action] { action = [] { return runDecide(flags); }; });
}

} // namespace mlgo::cli
