//===- env/regalloc_problems_test.cc - the regalloc problems' bindings -------===//
///
/// How the regalloc problem binds the default eviction emulation
/// (mlgo/policy/default_eviction.h): default decision, fallback, clang's own
/// default when offered; and the parser of the capability probe.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/clang_probe.h"
#include "mlgo/env/problem.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>

namespace mlgo::env {
namespace {

using ::testing::HasSubstr;
using testing::ObservationFixture;

std::shared_ptr<const BoundProblem> bind(const protocol::LogHeader& header,
                                         const ProblemOptions& options) {
  auto bound = (*findProblem("regalloc"))->bind(header, options);
  EXPECT_TRUE(bound.ok()) << bound.error().message();
  return bound.ok() ? *bound : nullptr;
}

protocol::LogHeader emulationHeader() {
  protocol::LogHeader header;
  for (const char* name : {"mask", "is_hint", "is_local"})
    header.features.push_back(*protocol::TensorSpec::create(name, protocol::ElementType::kInt64, {1, 3}));
  for (const char* name : {"nr_broken_hints", "nr_urgent", "use_def_density"})
    header.features.push_back(*protocol::TensorSpec::create(name, protocol::ElementType::kFloat, {1, 3}));
  header.advice = *protocol::TensorSpec::create("index_to_evict", protocol::ElementType::kInt64, {1});
  return header;
}

std::vector<std::byte> emulationObservation(std::array<float, 3> weights, int64_t clangDefault) {
  std::vector<std::byte> data(3 * 3 * 8 + 3 * 3 * 4 + 8);
  int64_t mask[3] = {1, 1, 1};
  std::memcpy(data.data(), mask, sizeof(mask));
  std::memcpy(data.data() + 72 + 24, weights.data(), 12);
  std::memcpy(data.data() + 72 + 36, &clangDefault, 8);
  return data;
}

// The default decision is the host emulation, also as the fallback; with a
// clang that sends its own (a feature named "...default..."), that one,
// hidden from the agent unless asked for.
TEST(DefaultEvictionBindingTest, DefaultDecisionIsTheEmulationUnlessClangSendsIt) {
  auto emulated = bind(emulationHeader(), {});
  ASSERT_TRUE(emulated);
  EXPECT_EQ(emulated->defaultDecisionSource(), "host-emulation-v2:default-eviction");
  std::array<float, 3> weights = {0.5f, 0.2f, 1.0f};
  ObservationFixture obs(emulated->header(), emulationObservation(weights, 0));
  EXPECT_EQ(std::get<int64_t>(*emulated->defaultDecision(obs.observation)), 1);
  EXPECT_EQ(std::get<int64_t>(emulated->fallback(obs.observation)), 1);

  protocol::LogHeader withDefault = emulationHeader();
  withDefault.features.push_back(
      *protocol::TensorSpec::create("index_to_evict_default", protocol::ElementType::kInt64, {1}));
  ProblemOptions options;
  options.regallocClangDefault = true;
  EXPECT_THAT((*findProblem("regalloc"))->interactiveArgs("/d/ch", options),
              ::testing::Contains("-regalloc-evict-interactive-include-default"));
  EXPECT_THAT((*findProblem("regalloc"))->interactiveArgs("/d/ch", {}),
              ::testing::Not(::testing::Contains("-regalloc-evict-interactive-include-default")));
  auto clang = bind(withDefault, options);
  ASSERT_TRUE(clang);
  EXPECT_EQ(clang->defaultDecisionSource(), "clang-default:index_to_evict_default");
  EXPECT_EQ(clang->visibleFeatures().size(), 6u);
  ObservationFixture told(clang->header(), emulationObservation(weights, 2));
  EXPECT_EQ(std::get<int64_t>(*clang->defaultDecision(told.observation)), 2);
  options.includeDefaultFeature = true;
  EXPECT_EQ(bind(withDefault, options)->visibleFeatures().size(), 7u);
  // Asked for clang's default, a header without it is unsupported.
  options.includeDefaultFeature = false;
  auto missing = (*findProblem("regalloc"))->bind(emulationHeader(), options);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("no default-decision feature"));
}

// The capability probe's parser: clang-22 lists no include-default option
// for the eviction advisor; a newer clang does.
TEST(LlvmOptionListTest, ParsesNamesAndFindsIncludeDefault) {
  std::string_view listing =
      "OVERVIEW: clang LLVM compiler\n\nUSAGE: clang [options] <input files>\n\nOPTIONS:\n"
      "  --inliner-interactive-include-default                  - In interactive mode, also "
      "send the default policy decision: inlining_default.\n"
      "  --regalloc-evict-interactive-channel-base=<string>     - Base file path\n"
      "      =default                                            -   Default\n"
      "  -x86-asm-syntax                                         - Assembly syntax\n";
  std::vector<std::string> names = parseLlvmOptionList(listing);
  EXPECT_THAT(names, ::testing::ElementsAre("inliner-interactive-include-default",
                                            "regalloc-evict-interactive-channel-base",
                                            "x86-asm-syntax"));
  EXPECT_FALSE(offersRegallocIncludeDefault(names));

  std::string newer(listing);
  newer += "  --regalloc-evict-interactive-include-default    - In interactive mode, also send "
           "the default policy decision.\n";
  EXPECT_TRUE(offersRegallocIncludeDefault(parseLlvmOptionList(newer)));
  // A longer option with the same prefix is not the option.
  EXPECT_FALSE(offersRegallocIncludeDefault(
      parseLlvmOptionList("  --regalloc-evict-interactive-include-default-x - no\n")));
}

} // namespace
} // namespace mlgo::env
