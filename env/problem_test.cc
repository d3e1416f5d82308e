//===- env/problem_test.cc - action rules, fallbacks, headers --------------===//
#include "mlgo/env/problem.h"

#include "mlgo/env/environment.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::env {
namespace {

using protocol::ElementType;
using testing::ObservationFixture;
using ::testing::HasSubstr;

std::shared_ptr<const BoundProblem> bind(std::string_view name, const protocol::LogHeader& header,
                                         ProblemOptions options = {}) {
  auto problem = findProblem(name);
  EXPECT_TRUE(problem.ok());
  auto bound = (*problem)->bind(header, options);
  EXPECT_TRUE(bound.ok()) << bound.error().message();
  return bound.ok() ? *bound : nullptr;
}

int64_t encoded(const BoundProblem& bound, const ActionValue& action) {
  std::vector<std::byte> out(bound.actionSpec().byteSize());
  EXPECT_TRUE(bound.encode(action, out).ok());
  int64_t value = 0;
  std::memcpy(&value, out.data(), sizeof value);
  return value;
}

TEST(ProblemRegistryTest, KnowsThreeProblems) {
  std::vector<std::string> names;
  for (const Problem* p : allProblems())
    names.emplace_back(p->name());
  EXPECT_EQ(names, (std::vector<std::string>{"inlining", "regalloc", "regalloc-priority"}));
  auto unknown = findProblem("loop-unroll");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(unknown.error().message(), HasSubstr("inlining, regalloc, regalloc-priority"));
}

TEST(ProblemRegistryTest, FlagsNameTheChannel) {
  auto inlining = *findProblem("inlining");
  auto args = inlining->interactiveArgs("/d/ch", {});
  EXPECT_THAT(args, ::testing::Contains("-inliner-interactive-channel-base=/d/ch"));
  EXPECT_THAT(args, ::testing::Contains("-inliner-interactive-include-default"));
  EXPECT_THAT(args, ::testing::Contains("-ml-advisor-size-increase-threshold=100"));
  EXPECT_EQ(std::count(args.begin(), args.end(), "-mllvm"), 4);
  auto regalloc = *findProblem("regalloc");
  EXPECT_THAT(regalloc->interactiveArgs("/d/ch", {}),
              ::testing::Contains("-regalloc-evict-interactive-channel-base=/d/ch"));
  auto priority = *findProblem("regalloc-priority");
  EXPECT_THAT(priority->interactiveArgs("/d/ch", {}),
              ::testing::Contains("-regalloc-priority-interactive-channel-base=/d/ch"));
}

TEST(InliningRulesTest, AcceptsZeroAndOneOnly) {
  auto bound = bind("inlining", testing::inliningLikeHeader());
  ASSERT_TRUE(bound);
  ObservationFixture obs(bound->header(), testing::inliningObservation(3, 1, 2, 1));
  for (ActionValue ok : {ActionValue(int64_t{0}), ActionValue(int64_t{1}), ActionValue(1.0)})
    EXPECT_TRUE(bound->validate(obs.observation, ok).ok());
  for (ActionValue bad : {ActionValue(int64_t{2}), ActionValue(int64_t{-1}), ActionValue(0.5),
                          ActionValue(std::nan("")), ActionValue(INFINITY)}) {
    auto st = bound->validate(obs.observation, bad);
    ASSERT_FALSE(st.ok()) << formatAction(bad);
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(encoded(*bound, ActionValue(1.0)), 1);
}

TEST(InliningRulesTest, DefaultIsTheFallbackAndHiddenUnlessAsked) {
  auto hidden = bind("inlining", testing::inliningLikeHeader());
  ASSERT_TRUE(hidden);
  EXPECT_THAT(
      std::vector<size_t>(hidden->visibleFeatures().begin(), hidden->visibleFeatures().end()),
      ::testing::ElementsAre(0, 1));
  ObservationFixture yes(hidden->header(), testing::inliningObservation(3, 1, 2, 1));
  ObservationFixture no(hidden->header(), testing::inliningObservation(3, 1, 2, 0));
  EXPECT_EQ(std::get<int64_t>(*hidden->defaultDecision(yes.observation)), 1);
  EXPECT_EQ(std::get<int64_t>(hidden->fallback(no.observation)), 0);

  ProblemOptions shown;
  shown.includeDefaultFeature = true;
  auto visible = bind("inlining", testing::inliningLikeHeader(), shown);
  ASSERT_TRUE(visible);
  EXPECT_EQ(visible->visibleFeatures().size(), 3u);
}

TEST(InliningRulesTest, HeaderWithoutDefaultIsUnsupported) {
  protocol::LogHeader header = testing::inliningLikeHeader();
  header.features.pop_back();
  auto bound = (*findProblem("inlining"))->bind(header, {});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(bound.error().message(), HasSubstr("inlining_default"));
}

ProblemOptions withVocabulary(unsigned dimension) {
  ProblemOptions options;
  options.ir2vecVocabulary = "/vocab/v.json";
  options.ir2vecDimension = dimension;
  return options;
}

void addEmbeddingFeature(protocol::LogHeader& header, std::string name, ElementType type,
                         int64_t dimension) {
  auto spec = protocol::TensorSpec::create(std::move(name), type, {dimension});
  ASSERT_TRUE(spec.ok());
  header.features.push_back(*spec);
}

TEST(InliningRulesTest, VocabularyAddsBothIr2VecFlags) {
  const Problem& inlining = **findProblem("inlining");
  auto plain = inlining.interactiveArgs("/tmp/ch", {});
  auto with = inlining.interactiveArgs("/tmp/ch", withVocabulary(8));
  EXPECT_THAT(plain, ::testing::Not(::testing::Contains(HasSubstr("ir2vec"))));
  EXPECT_THAT(with, ::testing::Contains("-ml-inliner-ir2vec-vocab-file=/vocab/v.json"));
  EXPECT_THAT(with, ::testing::Contains("-ir2vec-vocab-path=/vocab/v.json"));
  // Every option clang reads through -mllvm is preceded by it.
  for (size_t i = 0; i < with.size(); i += 2)
    EXPECT_EQ(with[i], "-mllvm") << with[i + 1];
  // The register-allocation problems have no IR2Vec features.
  for (const char* name : {"regalloc", "regalloc-priority"})
    EXPECT_EQ((*findProblem(name))->interactiveArgs("/tmp/ch", withVocabulary(8)),
              (*findProblem(name))->interactiveArgs("/tmp/ch", {}))
        << name;
}

TEST(InliningRulesTest, VocabularyNeedsBothEmbeddingFeaturesAtItsDimension) {
  const Problem& inlining = **findProblem("inlining");
  protocol::LogHeader header = testing::inliningLikeHeader();
  // clang ignored the flags: no embedding features.
  auto missing = inlining.bind(header, withVocabulary(8));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(missing.error().message(), HasSubstr("no 'callee_embedding' feature"));

  addEmbeddingFeature(header, "callee_embedding", ElementType::kFloat, 8);
  auto half = inlining.bind(header, withVocabulary(8));
  ASSERT_FALSE(half.ok());
  EXPECT_THAT(half.error().message(), HasSubstr("no 'caller_embedding' feature"));

  addEmbeddingFeature(header, "caller_embedding", ElementType::kFloat, 8);
  auto bound = bind("inlining", header, withVocabulary(8));
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->visibleFeatures().size(), 4u); // a, b and the two embeddings

  auto wrongDimension = inlining.bind(header, withVocabulary(75));
  ASSERT_FALSE(wrongDimension.ok());
  EXPECT_THAT(wrongDimension.error().message(), HasSubstr("expected 75 floats"));

  protocol::LogHeader integers = testing::inliningLikeHeader();
  addEmbeddingFeature(integers, "callee_embedding", ElementType::kInt64, 8);
  addEmbeddingFeature(integers, "caller_embedding", ElementType::kFloat, 8);
  EXPECT_FALSE(inlining.bind(integers, withVocabulary(8)).ok());
  // Without a vocabulary the features are simply more features.
  EXPECT_TRUE(inlining.bind(integers, {}).ok());
}

// The vocabulary is read before the corpus and clang are looked at: a bad
// file is the error reported even though both are missing too.
TEST(EnvironmentVocabularyTest, BadVocabularyFailsCreateNamingTheProblem) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto dir = support::TempDir::create(scope, "mlgo-env-test-");
  ASSERT_TRUE(dir.ok());
  EnvironmentOptions options;
  options.clang = dir->path() / "no-such-clang";
  options.corpus = dir->path() / "no-such-corpus";

  options.ir2vecVocabulary = dir->path() / "absent.json";
  auto absent = Environment::create(options);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(absent.error().message(), HasSubstr("IR2Vec vocabulary"));
  EXPECT_THAT(absent.error().message(), HasSubstr("absent.json"));

  struct Case {
    std::string json, expected;
  };
  std::vector<Case> cases = {
      {R"({"Opcodes": {"Ret": [1, 2]}, "Arguments": {"Function": [1, 2]}})", "'Types' section"},
      {R"({"Opcodes": {"Ret": [1, 2]}, "Types": {"VoidTy": [1]}, "Arguments": {"Function": [1, 2]}})",
       "Types.VoidTy has 1 values"},
      {R"({"Opcodes": {"Ret": [1, "x"]}, "Types": {"VoidTy": [1, 2]}, "Arguments": {"Function": [1, 2]}})",
       "Opcodes.Ret[1] is not a number"},
      {"{not json", "vocab.json"},
  };
  for (const Case& c : cases) {
    options.ir2vecVocabulary = dir->path() / "vocab.json";
    testing::writeFile(options.ir2vecVocabulary, c.json);
    auto created = Environment::create(options);
    ASSERT_FALSE(created.ok()) << c.json;
    EXPECT_EQ(created.error().code(), ErrorCode::kParse) << created.error().message();
    EXPECT_THAT(created.error().message(), HasSubstr(c.expected));
    EXPECT_THAT(created.error().message(), HasSubstr("IR2Vec vocabulary"));
  }
}

TEST(EvictionRulesTest, OnlyUnmaskedIndicesAreValid) {
  auto bound = bind("regalloc", testing::evictionLikeHeader());
  ASSERT_TRUE(bound);
  ObservationFixture obs(bound->header(), testing::evictionObservation({0, 1, 0, 1}));
  EXPECT_TRUE(bound->validate(obs.observation, ActionValue(int64_t{1})).ok());
  EXPECT_TRUE(bound->validate(obs.observation, ActionValue(int64_t{3})).ok());
  auto masked = bound->validate(obs.observation, ActionValue(int64_t{2}));
  ASSERT_FALSE(masked.ok());
  EXPECT_THAT(masked.error().message(), HasSubstr("mask[2] is 0"));
  EXPECT_THAT(masked.error().message(), HasSubstr("valid now: 1, 3"));
  for (ActionValue bad : {ActionValue(int64_t{-1}), ActionValue(int64_t{4}),
                          ActionValue(int64_t{99}), ActionValue(1.5)}) {
    auto st = bound->validate(obs.observation, bad);
    ASSERT_FALSE(st.ok()) << formatAction(bad);
    EXPECT_THAT(st.error().message(), HasSubstr("[0, 4)"));
  }
}

// Without the emulation's features (mlgo/policy/default_eviction.h) there is no
// default decision, and the fallback evicts nothing when it may.
TEST(EvictionRulesTest, FallbackWithoutEmulationFeaturesPrefersEvictingNothing) {
  auto bound = bind("regalloc", testing::evictionLikeHeader());
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->defaultDecisionSource(), "");
  ObservationFixture selfAllowed(bound->header(), testing::evictionObservation({0, 1, 0, 1}));
  EXPECT_EQ(std::get<int64_t>(bound->fallback(selfAllowed.observation)), 3);
  ObservationFixture mustEvict(bound->header(), testing::evictionObservation({0, 0, 1, 0}));
  ActionValue fallback = bound->fallback(mustEvict.observation);
  EXPECT_EQ(std::get<int64_t>(fallback), 2);
  EXPECT_TRUE(bound->validate(mustEvict.observation, fallback).ok());
}

TEST(EvictionRulesTest, HeaderWithoutMaskIsUnsupported) {
  protocol::LogHeader header = testing::evictionLikeHeader();
  header.features.erase(header.features.begin());
  auto bound = (*findProblem("regalloc"))->bind(header, {});
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message(), HasSubstr("'mask'"));
}

protocol::LogHeader priorityHeader(ElementType adviceType) {
  protocol::LogHeader header;
  header.features = {*protocol::TensorSpec::create("li_size", ElementType::kInt64, {1}),
                     *protocol::TensorSpec::create("weight", ElementType::kFloat, {1})};
  header.advice = *protocol::TensorSpec::create("priority", adviceType, {1});
  return header;
}

TEST(PriorityRulesTest, FiniteAndBelowTwoToThe32AsAFloat) {
  auto bound = bind("regalloc-priority", priorityHeader(ElementType::kFloat));
  ASSERT_TRUE(bound);
  std::vector<std::byte> data(12);
  ObservationFixture obs(bound->header(), data);
  for (ActionValue ok : {ActionValue(0.0), ActionValue(int64_t{7}), ActionValue(4294967040.0)})
    EXPECT_TRUE(bound->validate(obs.observation, ok).ok()) << formatAction(ok);
  // 4294967295 rounds to 2^32 as a float.
  for (ActionValue bad :
       {ActionValue(-1.0), ActionValue(-0.5), ActionValue(std::nan("")), ActionValue(INFINITY),
        ActionValue(4294967296.0), ActionValue(int64_t{4294967295})}) {
    auto st = bound->validate(obs.observation, bad);
    ASSERT_FALSE(st.ok()) << formatAction(bad);
    EXPECT_THAT(st.error().message(), HasSubstr("[0, 4294967296)"));
  }
  EXPECT_EQ(std::get<double>(bound->fallback(obs.observation)), 0.0); // weight 0 x 1000
  std::vector<std::byte> out(4);
  ASSERT_TRUE(bound->encode(ActionValue(int64_t{3}), out).ok());
  float value;
  std::memcpy(&value, out.data(), 4);
  EXPECT_EQ(value, 3.0f);
}

TEST(PriorityRulesTest, IntegerAdviceIsUnsupported) {
  auto bound = (*findProblem("regalloc-priority"))->bind(priorityHeader(ElementType::kInt64), {});
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(bound.error().message(), HasSubstr("one float"));
  ProblemOptions badConstant;
  badConstant.constantPriority = -3;
  auto rejected =
      (*findProblem("regalloc-priority"))->bind(priorityHeader(ElementType::kFloat), badConstant);
  EXPECT_FALSE(rejected.ok());
}

TEST(PriorityRulesTest, EachFallbackReadsItsFeatures) {
  protocol::LogHeader header = priorityHeader(ElementType::kFloat);
  header.features.insert(header.features.begin() + 1,
                         *protocol::TensorSpec::create("stage", ElementType::kInt64, {1}));
  auto observation = [](int64_t size, int64_t stage, float weight) {
    std::vector<std::byte> data(20);
    std::memcpy(data.data(), &size, 8);
    std::memcpy(data.data() + 8, &stage, 8);
    std::memcpy(data.data() + 16, &weight, 4);
    return data;
  };
  auto fallback = [&](const char* kind, std::vector<std::byte> data) {
    ProblemOptions options;
    options.priorityFallback = kind;
    options.constantPriority = 5;
    auto bound = bind("regalloc-priority", header, options);
    EXPECT_TRUE(bound) << kind;
    ObservationFixture obs(bound->header(), std::move(data));
    return std::get<double>(bound->fallback(obs.observation));
  };
  EXPECT_EQ(fallback("constant", observation(100, 1, 0.5f)), 5.0);
  EXPECT_EQ(fallback("li_size", observation(100, 1, 0.5f)), 100.0);
  EXPECT_EQ(fallback("li_size", observation(int64_t{1} << 40, 1, 0.5f)), 16777215.0);
  EXPECT_EQ(fallback("weight", observation(100, 1, 0.5f)), 500.0);
  EXPECT_EQ(fallback("weight", observation(100, 1, INFINITY)), 0.0);
  EXPECT_EQ(fallback("stage", observation(100, 1, 0.5f)), 1.0);
  EXPECT_EQ(fallback("stage", observation(100, 2, 0.5f)), 0.0);
  EXPECT_EQ(fallback("stage-then-size", observation(100, 1, 0.5f)), 8388608.0 + 50);
  EXPECT_EQ(fallback("stage-then-size", observation(100, 2, 0.5f)), 50.0);

  ProblemOptions unknown;
  unknown.priorityFallback = "random";
  auto rejected = (*findProblem("regalloc-priority"))->bind(header, unknown);
  ASSERT_FALSE(rejected.ok());
  EXPECT_THAT(rejected.error().message(), HasSubstr("unknown fallback 'random'"));
  ProblemOptions stage;
  stage.priorityFallback = "stage";
  EXPECT_FALSE(
      (*findProblem("regalloc-priority"))->bind(priorityHeader(ElementType::kFloat), stage).ok());
}

} // namespace
} // namespace mlgo::env
