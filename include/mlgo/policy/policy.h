//===- mlgo/policy/policy.h - policy files and their runner -----*- C++ -*-===//
///
/// \file
/// The C++ runner of mlgo-env's policy files (`"format": "mlgo-env-policy"`,
/// versions 1 to 3). The format is documented once, in the docstring of
/// python/mlgo_env/policies/policy.py; this runner reads the same files, refuses the
/// same ones and takes the same decisions as that file's `Policy.act`. In short:
///
///     {"format":"mlgo-env-policy","version":2,"problem":"inlining",
///      "features":["threshold","cost_estimate","inlining_default","callee_users"],
///      "transforms":["identity","identity","identity","signed-log1p"],
///      "margin":{"plus":"threshold","floor":1,"minus":"cost_estimate",
///                "anchor":"inlining_default","epsilon":0.5},
///      "mean":[0,0,0,1.2],"std":[1,1,1,0.8],
///      "layers":[{"weights":[[1],[0],[0],[0],[0.3]],"bias":[4],"activation":"linear"}],
///      "decision":"logit>0"}
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
/// Arithmetic, identical in both runners: IEEE double throughout; a value
/// is its tensor element widened to double; signed-log1p(v) =
/// sign(v) * log1p(|v|) and tanh are the C library's; standardisation is
/// (t - mean) / std; each layer output starts at 0.0, adds input[k] *
/// weight[k][o] for k in order, then the bias; relu(x) = max(x, 0) with NaN
/// kept. (The library is built with -ffp-contract=off: no fused multiply-add.)
///
/// Errors name the file and the field, in the Python loader's words:
/// `policy 'p.json': 'mean' has 2 values, expected 3`, `policy 'p.json' is
/// not valid JSON: ...`, `policy 'p.json': the observation has no feature
/// 'x' that the policy expects`.
///
/// Threads: Policy and BoundPolicy are immutable values once made; every
/// const member is safe to call from many threads at once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_POLICY_H
#define MLGO_POLICY_POLICY_H

#include "mlgo/policy/default_eviction.h"
#include "mlgo/protocol/tensor_spec.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policy {

inline constexpr std::string_view kFormat = "mlgo-env-policy";
/// The newest version this runner reads (it reads 1, 2 and 3).
inline constexpr int kNewestVersion = 3;
/// The feature carrying clang's own inlining decision (0/1).
inline constexpr std::string_view kInliningDefaultFeature = "inlining_default";

enum class Transform : uint8_t { kSignedLog1p, kIdentity };
enum class Activation : uint8_t { kTanh, kRelu, kLinear };
enum class Decision : uint8_t {
  kLogitPositive, ///< "logit>0"
  kFlipDefault,   ///< "flip-default-if-logit>0"
  kArgmaxMasked,  ///< "argmax-masked" (regalloc, version 3)
};

/// The file's spelling of a decision ("logit>0", ...).
std::string_view spelling(Decision decision);

struct Layer {
  size_t inputs = 0;
  size_t outputs = 0;
  std::vector<double> weights; ///< Row-major [inputs][outputs].
  std::vector<double> bias;    ///< [outputs].
  Activation activation = Activation::kLinear;
};

/// The "margin" block (inlining, version 2+); indices are into features().
struct Margin {
  size_t plus = 0;
  size_t minus = 0;
  double floor = 0;
  std::optional<size_t> anchor;
  double epsilon = 0.5;
};

class BoundPolicy;

/// A validated policy file.
class Policy {
public:
  /// Reads and validates a file. kNotFound / kIo when it cannot be read,
  /// kParse when it is not JSON or breaks the format; the message names the
  /// file (`policy '<path>'`) and the field.
  static Result<Policy> load(const std::filesystem::path& path);
  /// Validates JSON text; `where` prefixes messages (e.g. "policy 'p.json'").
  static Result<Policy> parse(std::string_view text, std::string_view where);

  /// "inlining" or "regalloc".
  const std::string& problem() const { return data_->problem; }
  int version() const { return data_->version; }
  Decision decision() const { return data_->decision; }
  const std::vector<std::string>& features() const { return data_->features; }
  /// regalloc: the mask feature's name.
  const std::string& maskFeature() const { return data_->mask; }
  /// The prefix of this policy's messages: "policy '<path>'".
  const std::string& where() const { return data_->where; }

  /// kInvalidArgument "policy 'p.json' is for problem 'inlining', not
  /// 'regalloc'" unless the policy is for `problem`.
  Status checkProblem(std::string_view problem) const;

  /// Binds the policy to the features of a compiler stream (clang's header
  /// features, in order): finds each feature it needs and checks its shape.
  /// kInvalidArgument naming the policy and the feature when one is missing
  /// or has the wrong number of values (inlining: one; regalloc: one per
  /// candidate, or one). Checking the advice tensor is the caller's business.
  Result<BoundPolicy> bind(std::span<const protocol::TensorSpec> specs) const;

private:
  friend class BoundPolicy;
  struct Data {
    std::string where;
    std::string problem;
    int version = 0;
    std::vector<std::string> features;
    std::vector<Transform> transforms;
    std::vector<double> mean;
    std::vector<double> std;
    std::vector<Layer> layers;
    std::optional<Margin> margin;
    Decision decision = Decision::kLogitPositive;
    std::string mask = "mask";
  };
  friend class PolicyParser;
  explicit Policy(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

/// A policy bound to one stream layout: answers observations.
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
  double logit(std::span<const std::span<const std::byte>> tensors, size_t row,
               int64_t emulated, std::vector<double>& scratchA,
               std::vector<double>& scratchB) const;

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

#endif // MLGO_POLICY_POLICY_H
