//===- trace/trace_policy.h - who decides in a trace -------------*- C++ -*-===//
///
/// \file
/// The policy a trace records. `--policy` takes:
///
///  - `default` (the default): the problem's default heuristic. For inlining
///    that is clang's own decision, which clang reports with every
///    observation (`inlining_default`); the header names it
///    `clang-default:inlining_default`. Stock clang does not expose the
///    default eviction or priority decision, so for the register-allocation
///    problems `default` means, in order: clang's own default when the
///    environment has it (`clang-default:<feature>`, a clang with
///    `-regalloc-evict-interactive-include-default`); a development-mode
///    clang's own training log of its default heuristic, when the probe
///    finds one (dev_mode_probe.h; header `clang-training-log`); the host's
///    emulation of the default eviction advisor
///    (`host-emulation-v2:default-eviction`, mlgo/policy/default_eviction.h);
///    else the problem's host fallback policy (below), named as such.
///  - `fallback`: the host fallback policy env/ uses to finish truncated
///    episodes: `fallback:inlining_default` (inlining),
///    `fallback:<default source>` (regalloc: its default decision, above;
///    `fallback:evict-none-else-first-valid` when it has none),
///    `fallback:priority=<kind>` (regalloc-priority; `--priority-fallback`,
///    env/problem.h), or `fallback:constant-priority=<p>` for `constant`.
///  - anything else: a policy file (mlgo/policy/policy_file.h; a file really
///    called `default` or `fallback` is `./default`), run on every
///    observation: `file:<absolute path>`. It must be for the traced problem
///    and find its features among clang's.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_POLICY_H
#define MLGO_TRACE_TRACE_POLICY_H

#include "mlgo/env/environment.h"
#include "mlgo/policy/policy_runner.h"

#include <memory>

#include <string>
#include <string_view>

namespace mlgo::trace {

enum class PolicySource : uint8_t {
  kClangDefault, ///< StepResult::defaultAction (clang's decision, or the host emulation).
  kFallback,     ///< StepResult::fallbackAction (the host policy).
  kTrainingLog,  ///< A development-mode clang's own log (no interactive episode).
  kFile,         ///< A policy file run on each observation.
};

struct TracePolicy {
  PolicySource source = PolicySource::kFallback;
  /// The header's "policy" value.
  std::string name;

  /// kFile: the policy, and once bind() ran, it bound to the observations.
  std::shared_ptr<const policy::Policy> file;
  std::shared_ptr<const policy::BoundPolicy> bound;
  std::vector<size_t> offsets;

  /// kFile: binds the policy to the environment's observations (every
  /// feature of clang's, as traces see them). kInvalidArgument naming the
  /// feature the policy misses. Other sources: nothing to do.
  Status bind(const env::EnvironmentDescription& description);
  /// The action for one decision request (not kTrainingLog). kUnsupported
  /// when the step does not carry the decision.
  Result<env::ActionValue> choose(const env::StepResult& step) const;
};

/// Resolves `--policy` (`default`, `fallback`, a policy file; empty =
/// `default`) for a problem. `developmentLog`: whether the clang can log its
/// own default decisions for this problem (dev_mode_probe.h).
/// `defaultSource`: the environment's EnvironmentDescription::
/// defaultActionSource (empty when not known yet). A file that cannot be
/// read or is not a policy for `problem`: the policy loader's error.
Result<TracePolicy> resolvePolicy(const env::Problem& problem, std::string_view requested,
                                  const env::ProblemOptions& options, bool developmentLog,
                                  std::string_view defaultSource = {});

/// The host fallback policy's name for a problem (`evict-none-else-first-valid`,
/// or the default source the regalloc fallback follows).
std::string fallbackPolicyName(const env::Problem& problem, const env::ProblemOptions& options,
                               std::string_view defaultSource = {});

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRACE_POLICY_H
