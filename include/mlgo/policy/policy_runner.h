//===- mlgo/policy/policy_runner.h - answering with a policy ----*- C++ -*-===//
///
/// \file
/// Runs a policy file (policy_file.h) over a compiler's observations
/// (docs/policy-format.md, "Running a policy"). The one runner: the Python
/// package's `Policy.act`, `logits` and `decisions` call it through its core
/// (python/src/policy_bindings.cc), so training, evaluation and the launcher
/// decide alike, to the bit.
///
///  - inlining (`logit>0`, `flip-default-if-logit>0`): one row of features,
///    each a one-element tensor of the observation; one logit; inline iff
///    logit > 0 (or: clang's `inlining_default` flipped iff logit > 0).
///  - regalloc (version 3, `"decision":"argmax-masked"`, `"mask":"mask"`):
///    one row per eviction candidate (33 on clang-22): a feature with one
///    value per candidate gives candidate i its value i, a one-element
///    feature (e.g. `progress`) gives every candidate its value. One logit
///    per candidate; the answer is the candidate with mask[i] == 1 whose logit
///    is largest (NaN counts as -infinity, ties go to the lower index); when
///    no candidate is allowed, the last index (evict nothing). The feature
///    named kDefaultEvictionPolicyName ("host-emulation-v2") is the host's:
///    1 for the candidate the emulation of clang's default evicts
///    (default_eviction.h), 0 for the others; bind() finds the emulation's
///    own features in the stream.
///
/// Arithmetic: IEEE double throughout; a value
/// is its tensor element widened to double; signed-log1p(v) =
/// sign(v) * log1p(|v|) and tanh are the C library's; standardisation is
/// (t - mean) / std; each layer output starts at 0.0, adds input[k] *
/// weight[k][o] for k in order, then the bias; relu(x) = max(x, 0) with NaN
/// kept. (The library is built with -ffp-contract=off: no fused multiply-add.)
///
/// Errors (from Policy::bind) name the policy and the feature:
/// `policy 'p.json': the observation has no feature 'x' that the policy
/// expects`.
///
/// Threads: a BoundPolicy is an immutable value once made; every const
/// member is safe to call from many threads at once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_POLICY_RUNNER_H
#define MLGO_POLICY_POLICY_RUNNER_H

#include "mlgo/policy/default_eviction.h"
#include "mlgo/policy/policy_file.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace mlgo::policy {

/// A policy bound to one stream layout (Policy::bind): answers observations.
class BoundPolicy {
public:
  /// The answer to one observation. `tensors` holds one view per spec given
  /// to bind(), each of that spec's byte size (as the stream reader hands
  /// them). inlining: 0 or 1; regalloc: a candidate index (see the file
  /// comment). Never fails; allocation-free after the first call of a
  /// thread is not promised (a few small vectors per call).
  int64_t decide(std::span<const std::span<const std::byte>> tensors) const;
  /// decide(), also returning the logits computed (one for inlining, one
  /// per candidate for regalloc) in `logits`.
  int64_t decide(std::span<const std::span<const std::byte>> tensors,
                 std::vector<double>& logits) const;

  const Policy& policy() const { return policy_; }
  /// Rows per observation: 1 for inlining, the candidate count for regalloc.
  size_t rows() const { return rows_; }

private:
  friend class Policy;
  struct Column {
    size_t tensor = 0;
    protocol::ElementType type = protocol::ElementType::kInt64;
    bool perRow = false;    ///< One value per candidate (else one value for all).
    bool emulated = false;  ///< The emulation's one-hot choice, not a tensor.
  };
  explicit BoundPolicy(Policy policy) : policy_(std::move(policy)) {}
  /// `emulated`: the emulation's choice for this observation (-1: none).
  double value(std::span<const std::span<const std::byte>> tensors, size_t column, size_t row,
               int64_t emulated) const;
  /// Vectors one decide() call reuses for every row.
  struct Scratch {
    std::vector<double> raw, in, out;
  };
  double logit(std::span<const std::span<const std::byte>> tensors, size_t row,
               int64_t emulated, Scratch& scratch) const;

  Policy policy_;
  std::vector<Column> columns_;
  size_t rows_ = 1;
  size_t maskTensor_ = 0;
  protocol::ElementType maskType_ = protocol::ElementType::kInt64;
  size_t defaultColumn_ = 0; ///< flip-default: the column of inlining_default.
  /// Set when a feature is the emulation's choice.
  std::optional<DefaultEvictionPolicy> emulation_;
};

} // namespace mlgo::policy

#endif // MLGO_POLICY_POLICY_RUNNER_H
