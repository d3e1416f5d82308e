//===- policy/policy_test_util.h - policies and observations for tests -----===//
///
/// Builders shared by the policy tests: tensor specs, observations filled by
/// feature name, and two reference policies (an anchored inlining margin, a
/// linear eviction scorer) as JSON objects to mutate.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_POLICY_TEST_UTIL_H
#define MLGO_POLICY_POLICY_TEST_UTIL_H

#include "mlgo/policy/policy_runner.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cstring>
#include <string>
#include <vector>

namespace mlgo::policy::testing {

using protocol::ElementType;
using protocol::TensorSpec;

inline TensorSpec spec(const std::string& name, ElementType type, std::vector<int64_t> shape) {
  return *TensorSpec::create(name, type, std::move(shape));
}

/// Observations for a list of specs: raw bytes per tensor, filled by name.
class Observation {
public:
  explicit Observation(std::vector<TensorSpec> specs) : specs_(std::move(specs)) {
    for (const auto& s : specs_)
      bytes_.emplace_back(s.byteSize());
  }
  template <typename T> void set(const std::string& name, std::vector<T> values) {
    for (size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].name() == name) {
        ASSERT_EQ(values.size() * sizeof(T), bytes_[i].size()) << name;
        std::memcpy(bytes_[i].data(), values.data(), bytes_[i].size());
        return;
      }
    FAIL() << "no feature " << name;
  }
  std::vector<std::span<const std::byte>> views() const { return {bytes_.begin(), bytes_.end()}; }
  const std::vector<TensorSpec>& specs() const { return specs_; }

private:
  std::vector<TensorSpec> specs_;
  std::vector<std::vector<std::byte>> bytes_;
};

inline std::vector<TensorSpec> inliningSpecs() {
  return {spec("threshold", ElementType::kInt64, {1}),
          spec("cost_estimate", ElementType::kInt64, {1}),
          spec("callee_users", ElementType::kInt64, {1}),
          spec("callee_embedding", ElementType::kFloat, {4}),
          spec("inlining_default", ElementType::kInt64, {1})};
}

/// The anchored margin policy with shift `shift` and weight `w` on
/// signed-log1p(callee_users).
inline llvm::json::Object marginPolicy(double shift, double w = 0) {
  using llvm::json::Array;
  return llvm::json::Object{
      {"format", "mlgo-env-policy"},
      {"version", 2},
      {"problem", "inlining"},
      {"features", Array{"threshold", "cost_estimate", "inlining_default", "callee_users"}},
      {"transforms", Array{"identity", "identity", "identity", "signed-log1p"}},
      {"margin", llvm::json::Object{{"plus", "threshold"},
                                    {"floor", 1},
                                    {"minus", "cost_estimate"},
                                    {"anchor", "inlining_default"},
                                    {"epsilon", 0.5}}},
      {"mean", Array{0, 0, 0, 1.5}},
      {"std", Array{1, 1, 1, 2}},
      {"layers", Array{llvm::json::Object{
                     {"weights", Array{Array{1}, Array{0}, Array{0}, Array{0}, Array{w}}},
                     {"bias", Array{shift}},
                     {"activation", "linear"}}}},
      {"decision", "logit>0"},
      {"metadata", llvm::json::Object{}}};
}

inline std::string text(const llvm::json::Value& value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << value;
  return os.str();
}

inline Result<Policy> parseObject(const llvm::json::Object& obj) {
  return Policy::parse(text(llvm::json::Object(obj)), "policy 'p.json'");
}

inline std::vector<TensorSpec> evictionSpecs() {
  return {spec("mask", ElementType::kInt64, {1, 4}), spec("weight", ElementType::kFloat, {1, 4}),
          spec("is_hint", ElementType::kInt64, {1, 4}), spec("progress", ElementType::kFloat, {1})};
}

inline llvm::json::Object evictionPolicy() {
  using llvm::json::Array;
  return llvm::json::Object{
      {"format", "mlgo-env-policy"},
      {"version", 3},
      {"problem", "regalloc"},
      {"features", Array{"weight", "is_hint", "progress"}},
      {"transforms", Array{"identity", "identity", "identity"}},
      {"mean", Array{0, 0, 0}},
      {"std", Array{1, 1, 1}},
      // logit = -weight + 10 * is_hint + progress
      {"layers", Array{llvm::json::Object{{"weights", Array{Array{-1}, Array{10}, Array{1}}},
                                          {"bias", Array{0}},
                                          {"activation", "linear"}}}},
      {"decision", "argmax-masked"},
      {"mask", "mask"}};
}


} // namespace mlgo::policy::testing

#endif // MLGO_POLICY_POLICY_TEST_UTIL_H
