//===- env/problem_test.cc - action rules, fallbacks, headers --------------===//
#include "mlgo/env/problem.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::env {
namespace {

using protocol::ElementType;
using ::testing::HasSubstr;

/// An Observation viewing `bytes` split per `header`'s features.
struct ObservationFixture {
  ObservationFixture(const protocol::LogHeader& header, std::vector<std::byte> data)
      : bytes(std::move(data)) {
    size_t offset = 0;
    for (const auto& spec : header.features) {
      views.emplace_back(bytes.data() + offset, spec.byteSize());
      offset += spec.byteSize();
    }
    observation.data = bytes;
    observation.tensors = views;
  }
  std::vector<std::byte> bytes;
  std::vector<std::span<const std::byte>> views;
  Observation observation;
};

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
  EXPECT_TRUE(inlining->scoreArgs("/d/r", true).empty());
  auto regalloc = *findProblem("regalloc");
  EXPECT_THAT(regalloc->interactiveArgs("/d/ch", {}),
              ::testing::Contains("-regalloc-evict-interactive-channel-base=/d/ch"));
  EXPECT_THAT(regalloc->scoreArgs("/d/r", true),
              ::testing::ElementsAre("-opt-record-file", "/d/r", "-opt-record-passes", "regalloc",
                                     "-opt-record-format", "bitstream"));
  EXPECT_THAT(regalloc->scoreArgs("/d/r", false),
              ::testing::Contains("-foptimization-record-file=/d/r"));
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

TEST(EvictionRulesTest, FallbackPrefersEvictingNothing) {
  auto bound = bind("regalloc", testing::evictionLikeHeader());
  ASSERT_TRUE(bound);
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
  EXPECT_EQ(std::get<double>(bound->fallback(obs.observation)), 1.0);
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

} // namespace
} // namespace mlgo::env
