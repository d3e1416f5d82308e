//===- mlgo/policy/policy_file.h - reading and writing policy files -*- C++ -*-===//
///
/// \file
/// mlgo-env's policy files (`"format": "mlgo-env-policy"`, versions 1 to 3):
/// small JSON files that the trainer writes and that `mlgo-env launch`,
/// `trace --policy`, `policy decide` and the Python package run. This is
/// their one reader, validator and writer: the Python package
/// (python/mlgo_env/policies/) calls it through its core (`mlgo_env._core`,
/// python/src/policy_bindings.cc). The format, every field, its units and
/// each refusal with its message are in docs/policy-format.md; golden files
/// are in tests/data/policies/ (manifest.json). An inlining example:
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
/// The checks run in a fixed order and stop at the first failure; messages
/// name the policy and the field, an offending value shown as JSON (`null`
/// when absent): `policy 'p.json': 'mean' has 2 values, expected 3`,
/// `policy 'p.json': version "2" is not supported (...)`. Writing
/// (toJson(), text()) picks the oldest version that holds the policy, and
/// what it writes reads back as the same policy, to the bit. Running a
/// policy is policy_runner.h.
///
/// Threads: a Policy is an immutable value once made; every const member is
/// safe to call from many threads at once.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_POLICY_FILE_H
#define MLGO_POLICY_POLICY_FILE_H

#include "mlgo/protocol/tensor_spec.h"
#include "mlgo/support/result.h"

#include <llvm/Support/JSON.h>

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
/// a large network a few MB).
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

/// The file's spelling of a decision ("logit>0", ...), a transform
/// ("signed-log1p", "identity") and an activation ("tanh", "relu", "linear").
std::string_view spelling(Decision decision);
std::string_view spelling(Transform transform);
std::string_view spelling(Activation activation);

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
  /// Validates parsed JSON (what parse() does after parsing); kParse as above.
  static Result<Policy> fromJson(const llvm::json::Value& root, std::string_view where);

  /// The file's JSON: version 1 when every transform is signed-log1p, there
  /// is no margin and the decision is "logit>0"; 3 for "argmax-masked"; else
  /// 2. Keys the format does not know are not kept, "metadata" is.
  llvm::json::Value toJson() const;
  /// toJson() as the file's text (json_text.h's numbers, indented, keys in
  /// the format's order, a final newline): what the Python package's
  /// save_policy writes. kInvalidArgument `<where>: 'metadata' holds NaN or
  /// an infinity, which JSON cannot hold` (the parameters are finite).
  Result<std::string> text() const;

  /// "inlining" or "regalloc".
  const std::string& problem() const { return data_->problem; }
  int version() const { return data_->version; }
  Decision decision() const { return data_->decision; }
  const std::vector<std::string>& features() const { return data_->features; }
  /// regalloc: the mask feature's name.
  const std::string& maskFeature() const { return data_->mask; }
  /// The prefix of this policy's messages: "policy '<path>'".
  const std::string& where() const { return data_->where; }
  /// One per feature (version 1: signed-log1p for all).
  const std::vector<Transform>& transforms() const { return data_->transforms; }
  const std::vector<double>& mean() const { return data_->mean; }
  /// The file's "std".
  const std::vector<double>& stdDev() const { return data_->std; }
  const std::vector<Layer>& layers() const { return data_->layers; }
  const std::optional<Margin>& margin() const { return data_->margin; }
  /// The "metadata" object ({} when the file has none).
  const llvm::json::Object& metadata() const { return data_->metadata; }

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
  /// The logits of raw feature rows with the runner's arithmetic (what a
  /// bound policy computes): `rows` holds whole rows of features().size()
  /// values, row-major, each the feature's value before its transform (for
  /// regalloc, one candidate's). One logit per row, in `logits` (resized).
  /// For batches of recorded rows (training). Defined with the runner.
  void logits(std::span<const double> rows, std::vector<double>& logits) const;
  /// The 0/1 answers of raw rows as logits() has them: logit > 0, flipped
  /// where `inlining_default` > 0.5 for "flip-default-if-logit>0".
  /// kInvalidArgument for "argmax-masked": a regalloc policy answers a whole
  /// observation (BoundPolicy::decide), not a row. Defined with the runner.
  Result<std::vector<int8_t>> decisions(std::span<const double> rows) const;

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
    llvm::json::Object metadata;
  };
  explicit Policy(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  /// The logit of one raw row (`in`, `out`: scratch the caller keeps).
  double logit(std::span<const double> raw, std::vector<double>& in,
               std::vector<double>& out) const;
  std::shared_ptr<const Data> data_;
};

} // namespace mlgo::policy

#endif // MLGO_POLICY_POLICY_FILE_H
