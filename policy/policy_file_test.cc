//===- policy/policy_file_test.cc - reading and refusing policy files -------===//
#include "policy_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

namespace mlgo::policy {
namespace {

using namespace mlgo::policy::testing;
using ::testing::HasSubstr;

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
      {[](auto& o) { o["format"] = "other"; }, R"('format' is "other", expected "mlgo-env-policy")"},
      {[](auto& o) { o.erase("format"); }, "'format' is null"},
      {[](auto& o) { o["version"] = 7; }, "version 7 is not supported"},
      {[](auto& o) { o["version"] = true; }, "version true is not supported"},
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
       R"(unknown transform "log" (known: signed-log1p, identity))"},
      {[](auto& o) { (*o.getObject("margin"))["plus"] = "nope"; },
       R"('margin' plus "nope" is not one of the features)"},
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
       R"(layer 0: activation "sigmoid" is not one of tanh, relu, linear)"},
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
       R"(decision "argmax-masked" is not one of logit>0, flip-default-if-logit>0)"},
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
  EXPECT_EQ(missing.error().message(),
            "cannot read policy '" + (dir / "missing.json").string() +
                "': No such file or directory");
  // A directory is not read as empty text: the system's reason.
  std::filesystem::create_directories(dir / "directory.json");
  auto directory = Policy::load(dir / "directory.json");
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code(), ErrorCode::kIo);
  EXPECT_EQ(directory.error().message(),
            "cannot read policy '" + (dir / "directory.json").string() + "': Is a directory");
  auto good = Policy::load(write("good.json", text(llvm::json::Object(marginPolicy(1.0)))));
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_EQ(good->where(), "policy '" + (dir / "good.json").string() + "'");
  EXPECT_EQ(good->version(), 2);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace mlgo::policy
