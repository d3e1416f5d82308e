//===- policy/policy_test.cc - policy files and the runner ------------------===//
#include "mlgo/policy/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

namespace mlgo::policy {
namespace {

using protocol::ElementType;
using protocol::TensorSpec;
using ::testing::HasSubstr;

TensorSpec spec(const std::string& name, ElementType type, std::vector<int64_t> shape) {
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

std::vector<TensorSpec> inliningSpecs() {
  return {spec("threshold", ElementType::kInt64, {1}),
          spec("cost_estimate", ElementType::kInt64, {1}),
          spec("callee_users", ElementType::kInt64, {1}),
          spec("callee_embedding", ElementType::kFloat, {4}),
          spec("inlining_default", ElementType::kInt64, {1})};
}

/// The anchored margin policy with shift `shift` and weight `w` on
/// signed-log1p(callee_users).
llvm::json::Object marginPolicy(double shift, double w = 0) {
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

std::string text(const llvm::json::Value& value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << value;
  return os.str();
}

Result<Policy> parseObject(const llvm::json::Object& obj) {
  return Policy::parse(text(llvm::json::Object(obj)), "policy 'p.json'");
}

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

std::vector<TensorSpec> evictionSpecs() {
  return {spec("mask", ElementType::kInt64, {1, 4}), spec("weight", ElementType::kFloat, {1, 4}),
          spec("is_hint", ElementType::kInt64, {1, 4}), spec("progress", ElementType::kFloat, {1})};
}

llvm::json::Object evictionPolicy() {
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

TEST(PolicyTest, CheckProblemNamesBoth) {
  auto policy = parseObject(marginPolicy(0.0));
  ASSERT_TRUE(policy.ok());
  EXPECT_TRUE(policy->checkProblem("inlining").ok());
  Status st = policy->checkProblem("regalloc");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "policy 'p.json' is for problem 'inlining', not 'regalloc'");
}

struct Corruption {
  std::function<void(llvm::json::Object&)> mutate;
  std::string message;
};

TEST(PolicyTest, CorruptFilesNameTheField) {
  using llvm::json::Array;
  auto layer0 = [](llvm::json::Object& o) -> llvm::json::Object& {
    return *(*o.getArray("layers"))[0].getAsObject();
  };
  std::vector<Corruption> cases = {
      {[](auto& o) { o["format"] = "other"; }, "'format' is 'other', expected 'mlgo-env-policy'"},
      {[](auto& o) { o.erase("format"); }, "'format' is None"},
      {[](auto& o) { o["version"] = 7; }, "version 7 is not supported"},
      {[](auto& o) { o["version"] = true; }, "version True is not supported"},
      {[](auto& o) { o["problem"] = ""; }, "'problem' must name the problem"},
      {[](auto& o) { o["problem"] = "regalloc-priority"; },
       "problem 'regalloc-priority' has no policy form"},
      {[](auto& o) {
         o["features"] = Array{"a", "a", "b", "c"};
       },
       "'features' names a feature twice"},
      {[](auto& o) { o["features"] = Array{}; }, "'features' must be a non-empty list of names"},
      {[](auto& o) { o["transforms"] = Array{"identity"}; },
       "'transforms' must list one transform per feature (4)"},
      {[](auto& o) {
         o["transforms"] = Array{"identity", "identity", "identity", "log"};
       },
       "unknown transform 'log' (known: signed-log1p, identity)"},
      {[](auto& o) { (*o.getObject("margin"))["plus"] = "nope"; },
       "'margin' plus 'nope' is not one of the features"},
      {[](auto& o) { (*o.getObject("margin"))["floor"] = "1"; },
       "'margin' floor must be a finite number"},
      {[](auto& o) {
         o["mean"] = Array{0, 0};
       },
       "'mean' has 2 values, expected 4"},
      {[](auto& o) {
         o["std"] = Array{1, 0, 1, 1};
       },
       "'std' must be positive"},
      {[](auto& o) {
         o["std"] = Array{1, "x", 1, 1};
       },
       "'std' must be a list of numbers"},
      {[&](auto& o) { layer0(o)["activation"] = "sigmoid"; },
       "layer 0: activation 'sigmoid' is not one of tanh, relu, linear"},
      {[&](auto& o) { layer0(o).getArray("weights")->pop_back(); },
       "layer 0: 'weights' must have 5 rows (one per input, the margin first)"},
      {[&](auto& o) {
         layer0(o)["bias"] = Array{1, 2};
       },
       "layer 0: 'bias' has 2 values"},
      {[&](auto& o) {
         (*layer0(o).getArray("weights"))[1] = Array{0, 1};
       },
       "layer 0: 'weights' row 1 has 2 values, expected 1"},
      {[](auto& o) { o["layers"] = Array{}; }, "'layers' must be a non-empty list"},
      {[](auto& o) { o["metadata"] = 3; }, "'metadata' must be an object"},
      {[](auto& o) { o["decision"] = "argmax-masked"; },
       "decision 'argmax-masked' is not one of logit>0, flip-default-if-logit>0"},
      {[](auto& o) {
         o["version"] = 3;
         o["decision"] = "argmax-masked";
       },
       "decision 'argmax-masked' is for problem 'regalloc', not 'inlining'"},
      {[](auto& o) { o["problem"] = "regalloc"; }, "'margin' is for inlining policies"},
  };
  for (const Corruption& c : cases) {
    auto obj = marginPolicy(0.0);
    c.mutate(obj);
    auto policy = parseObject(obj);
    ASSERT_FALSE(policy.ok()) << c.message;
    EXPECT_EQ(policy.error().code(), ErrorCode::kParse);
    EXPECT_THAT(policy.error().message(), HasSubstr("policy 'p.json': " + c.message));
  }
  auto obj = evictionPolicy();
  obj["mask"] = "";
  auto policy = parseObject(obj);
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message(), HasSubstr("'mask' must name the mask feature"));
  obj = evictionPolicy();
  obj["decision"] = "logit>0";
  policy = parseObject(obj);
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message(),
              HasSubstr("problem 'regalloc' policies decide with 'argmax-masked' (version 3), "
                        "not 'logit>0'"));
  obj = evictionPolicy();
  obj["margin"] = llvm::json::Object{{"plus", "weight"}, {"minus", "is_hint"}, {"floor", 1}};
  policy = parseObject(obj);
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message(), HasSubstr("'margin' is for inlining policies"));
}

TEST(PolicyTest, FilesThatAreNotPoliciesAreNamed) {
  auto dir =
      std::filesystem::temp_directory_path() / ("mlgo-policy-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << body;
    return dir / name;
  };
  auto bad = Policy::load(write("bad.json", "{not json"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(),
              HasSubstr("policy '" + (dir / "bad.json").string() + "' is not valid JSON: "));
  auto array = Policy::load(write("array.json", "[1, 2]"));
  ASSERT_FALSE(array.ok());
  EXPECT_THAT(array.error().message(), HasSubstr("array.json': not a JSON object"));
  auto missing = Policy::load(dir / "missing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("cannot read policy '"));
  auto good = Policy::load(write("good.json", text(llvm::json::Object(marginPolicy(1.0)))));
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_EQ(good->where(), "policy '" + (dir / "good.json").string() + "'");
  EXPECT_EQ(good->version(), 2);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace mlgo::policy
