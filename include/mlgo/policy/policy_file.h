//===- mlgo/policy/policy_file.h - reading policy files ---------*- C++ -*-===//
///
/// \file
/// Reading and validating mlgo-env's policy files (`"format":
/// "mlgo-env-policy"`, versions 1 to 3): small JSON files that the Python
/// trainer writes (python/mlgo_env/policies/policy_file.py) and that
/// `mlgo-env launch`, `trace --policy` and `policy decide` run. The format,
/// every field, its units and each refusal with its message are in
/// docs/policy-format.md; golden files both loaders are tested against are
/// in tests/data/policies/ (manifest.json). An inlining example:
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
/// and a register-allocation (eviction) one, version 3, one row per
/// candidate:
///
///     {"format":"mlgo-env-policy","version":3,"problem":"regalloc",
///      "features":["use_def_density","is_hint","progress"],
///      "transforms":["identity","identity","identity"],
///      "mean":[0,0,0],"std":[1,1,1],
///      "layers":[{"weights":[[-1],[10],[1]],"bias":[0],"activation":"linear"}],
///      "decision":"argmax-masked","mask":"mask"}
///
/// The checks run in the Python reader's order (policy_from_json), so both
/// refuse a file with the same first complaint, in the same words:
/// `policy 'p.json': 'mean' has 2 values, expected 3`, `policy 'p.json' is
/// not valid JSON: ...`. Running a policy is policy_runner.h.
///
/// Threads: a Policy is an immutable value once made; every const member is
/// safe to call from many threads at once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_POLICY_FILE_H
#define MLGO_POLICY_POLICY_FILE_H

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
/// The newest version this reader reads (it reads 1, 2 and 3).
inline constexpr int kNewestVersion = 3;
/// Files larger than this are refused before reading (a policy is a few KB;
/// a large network a few MB). The Python reader has the same limit.
inline constexpr uintmax_t kMaxPolicyFileBytes = uintmax_t{64} << 20;
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
  /// kParse when it is larger than kMaxPolicyFileBytes, is not JSON or
  /// breaks the format; the message names the file (`policy '<path>'`) and
  /// the field.
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
  /// Defined with the runner: include policy_runner.h to call it.
  Result<BoundPolicy> bind(std::span<const protocol::TensorSpec> specs) const;

private:
  friend class BoundPolicy;
  friend class PolicyParser;
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
  explicit Policy(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

} // namespace mlgo::policy

#endif // MLGO_POLICY_POLICY_FILE_H
