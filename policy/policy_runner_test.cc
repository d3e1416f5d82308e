//===- policy/policy_runner_test.cc - decisions of bound policies ------------===//
#include "policy_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cmath>
#include <limits>

namespace mlgo::policy {
namespace {

using namespace mlgo::policy::testing;
using ::testing::HasSubstr;

TEST(PolicyTest, AnchoredMarginAtZeroShiftIsTheDefault) {
  auto policy = parseObject(marginPolicy(0.0));
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  auto bound = policy->bind(inliningSpecs());
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  Observation obs(inliningSpecs());
  // Cost above and below the threshold, both anchors: the anchor decides.
  for (int64_t cost : {-40, 0, 5, 44, 45, 46, 500})
    for (int64_t def : {0, 1}) {
      obs.set<int64_t>("threshold", {45});
      obs.set<int64_t>("cost_estimate", {cost});
      obs.set<int64_t>("callee_users", {cost % 7});
      obs.set<int64_t>("inlining_default", {def});
      EXPECT_EQ(bound->decide(obs.views()), def) << cost;
    }
}

TEST(PolicyTest, ShiftMovesTheBoundaryInCostUnits) {
  auto policy = parseObject(marginPolicy(10.0));
  ASSERT_TRUE(policy.ok());
  auto bound = policy->bind(inliningSpecs());
  ASSERT_TRUE(bound.ok());
  Observation obs(inliningSpecs());
  obs.set<int64_t>("threshold", {45});
  obs.set<int64_t>("inlining_default", {0});
  obs.set<int64_t>("callee_users", {3});
  obs.set<int64_t>("cost_estimate", {54}); // margin -9, +10 > 0
  EXPECT_EQ(bound->decide(obs.views()), 1);
  obs.set<int64_t>("cost_estimate", {56}); // margin -11
  EXPECT_EQ(bound->decide(obs.views()), 0);
  std::vector<double> logits;
  EXPECT_EQ(bound->decide(obs.views(), logits), 0);
  ASSERT_EQ(logits.size(), 1u);
  EXPECT_EQ(logits[0], -1.0);
}

TEST(PolicyTest, HiddenLayersFollowTheDocumentedArithmetic) {
  using llvm::json::Array;
  llvm::json::Object obj{
      {"format", "mlgo-env-policy"},
      {"version", 1},
      {"problem", "inlining"},
      {"features", Array{"threshold", "callee_users"}},
      {"mean", Array{1, 0.5}},
      {"std", Array{2, 0.25}},
      {"layers", Array{llvm::json::Object{{"weights", Array{Array{0.5, -1}, Array{0.25, 2}}},
                                          {"bias", Array{0.1, -0.2}},
                                          {"activation", "tanh"}},
                       llvm::json::Object{{"weights", Array{Array{1.5}, Array{-0.75}}},
                                          {"bias", Array{0.05}},
                                          {"activation", "relu"}}}}};
  auto policy = parseObject(obj);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  std::vector<TensorSpec> specs = inliningSpecs();
  auto bound = policy->bind(specs);
  ASSERT_TRUE(bound.ok());
  Observation obs(specs);
  obs.set<int64_t>("threshold", {-7});
  obs.set<int64_t>("callee_users", {3});
  double x0 = (-std::log1p(7.0) - 1) / 2, x1 = (std::log1p(3.0) - 0.5) / 0.25;
  double h0 = std::tanh(0.0 + x0 * 0.5 + x1 * 0.25 + 0.1);
  double h1 = std::tanh(0.0 + x0 * -1 + x1 * 2 + -0.2);
  double out = std::max(0.0 + h0 * 1.5 + h1 * -0.75 + 0.05, 0.0);
  std::vector<double> logits;
  EXPECT_EQ(bound->decide(obs.views(), logits), out > 0 ? 1 : 0);
  EXPECT_EQ(logits.at(0), out);
}

TEST(PolicyTest, FlipClassifierFlipsTheDefaultWhereTheLogitIsPositive) {
  auto obj = marginPolicy(0.0);
  obj["margin"] = nullptr;
  obj["layers"] = llvm::json::Array{
      llvm::json::Object{{"weights", llvm::json::Array{llvm::json::Array{0}, llvm::json::Array{0},
                                                       llvm::json::Array{0}, llvm::json::Array{1}}},
                         {"bias", llvm::json::Array{-1.0}},
                         {"activation", "linear"}}};
  obj["decision"] = "flip-default-if-logit>0";
  auto policy = parseObject(obj);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  auto bound = policy->bind(inliningSpecs());
  ASSERT_TRUE(bound.ok());
  Observation obs(inliningSpecs());
  for (int64_t def : {0, 1}) {
    obs.set<int64_t>("inlining_default", {def});
    obs.set<int64_t>("callee_users", {0}); // z = -0.75 - 1 < 0: keep
    EXPECT_EQ(bound->decide(obs.views()), def);
    obs.set<int64_t>("callee_users", {1000}); // z = (6.9 - 1.5) / 2 - 1 > 0: flip
    EXPECT_EQ(bound->decide(obs.views()), 1 - def);
  }
}

TEST(PolicyTest, EvictionTakesTheBestAllowedCandidate) {
  auto policy = parseObject(evictionPolicy());
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  auto bound = policy->bind(evictionSpecs());
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  EXPECT_EQ(bound->rows(), 4u);
  Observation obs(evictionSpecs());
  obs.set<float>("progress", {0.5f});
  obs.set<int64_t>("is_hint", {0, 0, 0, 0});
  obs.set<float>("weight", {3, 1, 2, 5});
  obs.set<int64_t>("mask", {1, 1, 1, 1});
  std::vector<double> logits;
  EXPECT_EQ(bound->decide(obs.views(), logits), 1);
  EXPECT_THAT(logits, ::testing::ElementsAre(-2.5, -0.5, -1.5, -4.5));
  obs.set<int64_t>("mask", {1, 0, 1, 1}); // the best is masked
  EXPECT_EQ(bound->decide(obs.views()), 2);
  obs.set<int64_t>("is_hint", {0, 0, 0, 1}); // the hint wins
  EXPECT_EQ(bound->decide(obs.views()), 3);
  obs.set<int64_t>("is_hint", {0, 0, 0, 0}); // ties go to the lower index
  obs.set<int64_t>("mask", {0, 1, 1, 0});
  obs.set<float>("weight", {0, 2, 2, 0});
  EXPECT_EQ(bound->decide(obs.views()), 1);
  float nan = std::numeric_limits<float>::quiet_NaN(); // NaN ranks below everything
  obs.set<float>("weight", {0, nan, 1e30f, 0});
  EXPECT_EQ(bound->decide(obs.views()), 2);
  obs.set<float>("weight", {0, nan, nan, 0});
  EXPECT_EQ(bound->decide(obs.views()), 1);
  obs.set<int64_t>("mask", {0, 0, 0, 0}); // nothing allowed: the last index
  EXPECT_EQ(bound->decide(obs.views()), 3);
}

/// The emulation's six features over three columns (two registers, then the
/// live range itself), and progress.
std::vector<TensorSpec> emulationSpecs() {
  std::vector<TensorSpec> specs;
  for (const char* name : {"mask", "is_hint", "is_local"})
    specs.push_back(spec(name, ElementType::kInt64, {1, 3}));
  for (const char* name : {"nr_broken_hints", "nr_urgent", "use_def_density"})
    specs.push_back(spec(name, ElementType::kFloat, {1, 3}));
  specs.push_back(spec("progress", ElementType::kFloat, {1}));
  return specs;
}

// logit = bonus * host-emulation-v2 - use_def_density: the emulation's choice
// unless another candidate is lighter than it by more than the bonus.
llvm::json::Object anchoredEviction(double bonus) {
  using llvm::json::Array;
  auto obj = evictionPolicy();
  obj["features"] = Array{std::string(kDefaultEvictionPolicyName), "use_def_density"};
  obj["transforms"] = Array{"identity", "identity"};
  obj["mean"] = Array{0, 0};
  obj["std"] = Array{1, 1};
  obj["layers"] = Array{llvm::json::Object{
      {"weights", Array{Array{bonus}, Array{-1}}}, {"bias", Array{0}}, {"activation", "linear"}}};
  return obj;
}

TEST(PolicyTest, TheEmulationFeatureIsTheHostsDefaultEviction) {
  Observation obs(emulationSpecs());
  obs.set<int64_t>("mask", {1, 1, 1});
  obs.set<int64_t>("is_hint", {0, 0, 0});
  obs.set<int64_t>("is_local", {0, 0, 0});
  obs.set<float>("nr_broken_hints", {0, 1, 0}); // evicting 1 breaks a hint: 0 is cheaper
  obs.set<float>("nr_urgent", {0, 0, 0});
  obs.set<float>("use_def_density", {0.5f, 0.1f, 1.0f});
  obs.set<float>("progress", {0.5f});
  std::vector<TensorSpec> specs = emulationSpecs();
  EXPECT_EQ(DefaultEvictionPolicy::create(specs)->choose(obs.views()), 0);

  auto strong = parseObject(anchoredEviction(10.0)); // always the emulation
  ASSERT_TRUE(strong.ok()) << strong.error().message();
  auto bound = strong->bind(specs);
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  std::vector<double> logits;
  EXPECT_EQ(bound->decide(obs.views(), logits), 0);
  EXPECT_THAT(logits, ::testing::ElementsAre(9.5, -static_cast<double>(0.1f), -1.0));
  auto weak = parseObject(anchoredEviction(0.3)); // departs: 1 is lighter by 0.4
  ASSERT_TRUE(weak.ok());
  EXPECT_EQ(weak->bind(specs)->decide(obs.views()), 1);
  obs.set<int64_t>("mask", {0, 1, 1}); // the emulation follows the mask
  EXPECT_EQ(bound->decide(obs.views()), 1);

  // Without the emulation's features the policy cannot be bound; the message
  // names the policy, the feature and what the emulation misses.
  specs.erase(specs.begin() + 4); // nr_urgent
  auto unbound = strong->bind(specs);
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.error().message(),
              HasSubstr("policy 'p.json': feature 'host-emulation-v2': the default eviction "
                        "emulation needs feature 'nr_urgent'"));
  // It is a regalloc feature: an inlining policy naming it is refused at bind.
  auto obj = marginPolicy(0.0);
  obj["features"] = llvm::json::Array{"threshold", "cost_estimate", "inlining_default",
                                      std::string(kDefaultEvictionPolicyName)};
  auto inlining = parseObject(obj);
  ASSERT_TRUE(inlining.ok());
  EXPECT_THAT(inlining->bind(inliningSpecs()).error().message(),
              HasSubstr("no feature 'host-emulation-v2'"));
}

TEST(PolicyTest, BindNamesTheMissingOrMisshapenFeature) {
  auto policy = parseObject(marginPolicy(0.0));
  ASSERT_TRUE(policy.ok());
  std::vector<TensorSpec> specs = inliningSpecs();
  specs.erase(specs.begin() + 2); // callee_users
  auto bound = policy->bind(specs);
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().message(), "policy 'p.json': the observation has no feature "
                                     "'callee_users' that the policy expects");
  auto obj = marginPolicy(0.0);
  obj["features"] =
      llvm::json::Array{"threshold", "cost_estimate", "inlining_default", "callee_embedding"};
  auto embedding = parseObject(obj);
  ASSERT_TRUE(embedding.ok());
  bound = embedding->bind(inliningSpecs());
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message(),
              HasSubstr("feature 'callee_embedding' has 4 values; policies use one-element"));

  auto eviction = parseObject(evictionPolicy());
  ASSERT_TRUE(eviction.ok());
  std::vector<TensorSpec> wrong = evictionSpecs();
  wrong[1] = spec("weight", ElementType::kFloat, {1, 3});
  bound = eviction->bind(wrong);
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message(), HasSubstr("feature 'weight' has 3 values; regalloc "
                                                 "policies use features with one value per "
                                                 "candidate (4) or one value"));
  wrong = evictionSpecs();
  wrong.erase(wrong.begin());
  bound = eviction->bind(wrong);
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message(), HasSubstr("no feature 'mask'"));
}

} // namespace
} // namespace mlgo::policy
