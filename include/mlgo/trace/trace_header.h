//===- mlgo/trace/trace_header.h - the header of a trace --------*- C++ -*-===//
///
/// \file
/// A trace is a log in LLVM's TrainingLogger format (see
/// mlgo/protocol/training_log.h) written by `mlgo-env trace`. Its header is
/// the one clang's development-mode training logs have, plus three keys
/// LLVM's readers ignore:
///
///     {"features":[<clang's features, in clang's order>..., <action spec>],
///      "score":{"name":"reward","type":"float","port":0,"shape":[1]},
///      "problem":"regalloc",
///      "policy":"host-emulation-v2:default-eviction",
///      "action":"index_to_evict"}
///
/// and what `replay --verify` needs to compile the same way again, each
/// used unless its command line says otherwise: `"corpus":"<root>"`,
/// `"ir2vec_vocab":"<path>"` (when traced with `--ir2vec-vocab`) and the
/// recompile rules `"delete_flags":[...]`, `"replace_flags":["F=V",...]`,
/// `"add_flags":[...]` (when any were given).
///
///  - `features`: every feature clang sends (for inlining this includes
///    `inlining_default`), then the action the policy took, as a tensor
///    with the advice spec clang declared (`inlining_decision`,
///    `index_to_evict`, `priority`).
///  - `score`: one float; each observation is followed by an outcome
///    record. It is 0 except after the last observation of a context,
///    where it is the context's reward (see context_rewards.h).
///  - `problem`, `policy`, `action`: what produced the trace. `policy`
///    names the decision source: `clang-default:<feature>` (clang's own
///    decision, read from the stream), `clang-training-log` (a
///    development-mode clang's own log of its default heuristic),
///    `host-emulation-v2:default-eviction` (the host's versioned emulation
///    of clang's default eviction advisor), `fallback:<name>` (a host
///    policy, for problems whose default decision stock clang does not
///    expose), or `file:<absolute path>` (a policy file, run by the C++
///    policy runner: `trace --policy=FILE`).
///
/// Contexts are named `<module>` for module-level problems (inlining) and
/// `<module>:<function>` for per-function problems (register allocation).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_HEADER_H
#define MLGO_TRACE_TRACE_HEADER_H

#include "mlgo/corpus/command_line.h"
#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::trace {

/// Name of the score tensor in traces.
inline constexpr std::string_view kRewardName = "reward";

/// The keys a trace adds to the TrainingLogger header. All optional when
/// read back: logs not written by `mlgo-env trace` lack them.
struct TraceMetadata {
  std::string problem;
  std::string policy;
  std::string action;
  /// The IR2Vec vocabulary clang's embedding features came from (absolute;
  /// empty when none).
  std::string ir2vecVocabulary;
  /// The corpus root traced (absolute) and the recompile flag rules used.
  std::string corpus;
  corpus::FlagRules flagRules;

  friend bool operator==(const TraceMetadata&, const TraceMetadata&) = default;
};

/// The header of a trace: `observation` (clang's features, in order) then
/// `action`, and the float score `reward`.
protocol::LogHeader makeTraceHeader(std::span<const protocol::TensorSpec> observation,
                                    const protocol::TensorSpec& action);

/// The header line (without newline): header.toJson() with the metadata
/// keys added after the standard ones. Empty metadata fields are omitted.
std::string traceHeaderLine(const protocol::LogHeader& header, const TraceMetadata& metadata);

/// Reads the metadata keys from a header line (without newline). Keys that
/// are missing stay empty; a key that is present but not a string is a
/// kParse error.
Result<TraceMetadata> readTraceMetadata(std::string_view headerLine);

/// The context name of `function` in `module`: `module` when `function` is
/// empty (module-level problems), else `module:function`.
std::string contextName(std::string_view module, std::string_view function);

/// Splits a context name into (module, function) using the corpus's module
/// names: the longest name that equals the context, or is followed by ':'
/// in it. Module names may themselves contain ':'. nullopt if none fits.
std::optional<std::pair<std::string, std::string>>
splitContextName(std::string_view context, std::span<const std::string> sortedModules);

/// The action names clang's advisors use (inlining_decision,
/// index_to_evict, priority): a log whose last feature has one of them
/// carries the decision taken there.
bool isKnownActionName(std::string_view name);

} // namespace mlgo::trace

#endif // MLGO_TRACE_TRACE_HEADER_H
