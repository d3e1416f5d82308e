//===- env/regalloc_default_policy_test.cc - the default eviction emulation -===//
///
/// One test per rule of regalloc_default_policy.h, on hand-made observations
/// of four candidate registers plus the live range itself (column 4); how
/// the regalloc problem binds it (default decision, fallback, clang's own
/// default when offered); and the parser of the capability probe.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/regalloc_default_policy.h"

#include "mlgo/env/clang_probe.h"
#include "mlgo/env/problem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::env {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSelf = 4;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Every candidate legal, none a hint or local, no broken hints, nothing
/// urgent; candidate weights 0.4, 0.3, 0.2, 0.1 and the live range's 1.0.
EvictionColumns columns() {
  EvictionColumns c;
  c.mask = {1, 1, 1, 1, 1};
  c.isHint = {0, 0, 0, 0, 0};
  c.isLocal = {0, 0, 0, 0, 0};
  c.brokenHints = {0, 0, 0, 0, 0};
  c.urgent = {0, 0, 0, 0, 0};
  c.weight = {0.4f, 0.3f, 0.2f, 0.1f, 1.0f};
  return c;
}

TEST(DefaultEvictionTest, TheLightestInterferenceIsEvicted) {
  EXPECT_EQ(chooseDefaultEviction(columns()), 3);
}

// Rule 1: a masked column is never chosen, however cheap.
TEST(DefaultEvictionTest, Rule1MaskedColumnsAreSkipped) {
  EvictionColumns c = columns();
  c.mask[3] = 0;
  EXPECT_EQ(chooseDefaultEviction(c), 2);
}

// Rule 2: interferences must be strictly lighter than the live range.
TEST(DefaultEvictionTest, Rule2OnlyLighterInterferencesQualify) {
  EvictionColumns c = columns();
  c.weight = {0.5f, 0.9f, 0.7f, 0.6f, 0.6f};
  EXPECT_EQ(chooseDefaultEviction(c), 0); // 0.6 (equal) does not qualify.
  c.weight[0] = 0.6f;
  EXPECT_EQ(chooseDefaultEviction(c), kSelf);
}

// Rule 2: a NaN column holds an unspillable range and never qualifies; a
// masked last column (clang must evict) weighs infinity.
TEST(DefaultEvictionTest, Rule2UnspillableRanges) {
  EvictionColumns c = columns();
  c.weight = {kNaN, 0, 0, kNaN, 0};
  c.mask[kSelf] = 0; // The live range is unspillable: its column is empty.
  EXPECT_EQ(chooseDefaultEviction(c), 1);
  c.weight[kSelf] = kNaN; // Unspillable, but clang need not evict.
  c.mask[kSelf] = 1;
  EXPECT_EQ(chooseDefaultEviction(c), 1);
}

// The emulation's blind spot, pinned: an unspillable interference in a legal
// column reads NaN and takes every other weight, the live range's own
// included, down to 0 (clang divides by an infinite maximum). No weight order
// is left, so nothing qualifies and the emulation evicts nothing, whatever
// clang would have done (scripts/regalloc_poisoned_steps.py counts these).
TEST(DefaultEvictionTest, APoisonedStepEvictsNothing) {
  EvictionColumns c = columns();
  c.weight = {kNaN, 0, 0, 0, 0};
  EXPECT_EQ(chooseDefaultEviction(c), kSelf);
}

// Rule 3: fewer broken hints first, then the lower weight; ties keep the
// earlier register.
TEST(DefaultEvictionTest, Rule3CostIsBrokenHintsThenWeight) {
  EvictionColumns c = columns();
  c.brokenHints = {0, 1, 0.5f, 0.5f, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 0); // No broken hint beats lighter ones.
  c.brokenHints = {1, 0.5f, 0.5f, 0.5f, 0};
  c.weight = {0.1f, 0.3f, 0.2f, 0.2f, 1};
  EXPECT_EQ(chooseDefaultEviction(c), 2); // Tie between 2 and 3: the earlier.
}

// Rule 3: an urgent cascade break costs ten broken hints; the raw counts are
// recovered from the normalised values.
TEST(DefaultEvictionTest, Rule3UrgentBreaksCostTenHints) {
  EvictionColumns c = columns();
  c.mask[kSelf] = 0;
  c.weight = {0, 0, 0, 0, 0};
  // Broken hints 2, 0, 0, 1 (normalised by 2); urgent 0, 1, 0, 0 (by 1).
  c.brokenHints = {1, 0, 0, 0.5f, 0};
  c.urgent = {0, 1, 0, 0, 0};
  c.mask[2] = 0;
  EXPECT_EQ(chooseDefaultEviction(c), 3); // 2 hints < 4 hints < 10 (urgent).
  c.brokenHints = {1, 0, 0, 1, 0};        // Now 1, 0, 0, 1 (normalised by 1).
  c.weight = {0, 0, 0, 0.5f, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 0);
}

// Rule 4: once a candidate is found, a local interference is not evicted
// for a cheaper register; the first candidate may be local.
TEST(DefaultEvictionTest, Rule4LocalInterferencesOnlyFirst) {
  EvictionColumns c = columns();
  c.isLocal = {0, 1, 1, 1, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 0);
  c.isLocal = {1, 0, 1, 1, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 1);
  c.mask[0] = 0;
  c.isLocal = {0, 1, 1, 0, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 3);
}

// Rule 4 is clang's test for non-urgent evictions only: when the live range
// is unspillable (its mask 0) every spillable interference is urgent, and a
// cheaper local one is taken like any other.
TEST(DefaultEvictionTest, Rule4DoesNotHoldForAnUnspillableRange) {
  EvictionColumns c = columns();
  c.isLocal = {0, 1, 1, 1, 0};
  c.mask[kSelf] = 0;
  c.weight[kSelf] = 0;
  EXPECT_EQ(chooseDefaultEviction(c), 3);
}

// Rule 5: a qualifying preferred register ends the search.
TEST(DefaultEvictionTest, Rule5HintStopsTheSearch) {
  EvictionColumns c = columns();
  c.isHint[1] = 1;
  EXPECT_EQ(chooseDefaultEviction(c), 1);
  // A hint that does not qualify does not stop it.
  c.weight[1] = 2;
  EXPECT_EQ(chooseDefaultEviction(c), 3);
  // Nor does one that is not cheaper than the best so far.
  c.weight = {0.1f, 0.3f, 0.2f, 0.05f, 1};
  EXPECT_EQ(chooseDefaultEviction(c), 3);
}

// Rule 6: nothing qualifies: evict nothing, or when clang must evict, the
// cheapest legal column.
TEST(DefaultEvictionTest, Rule6NothingQualifies) {
  EvictionColumns c = columns();
  c.weight = {2, 3, 1.5f, 4, 1};
  EXPECT_EQ(chooseDefaultEviction(c), kSelf);
  c.mask[kSelf] = 0;
  c.weight = {kNaN, kNaN, kNaN, kNaN, 0};
  c.brokenHints = {1, 0.5f, 0.5f, 1, 0};
  EXPECT_EQ(chooseDefaultEviction(c), 1);
  c.mask = {0, 0, 0, 0, 0};
  EXPECT_EQ(chooseDefaultEviction(c), kSelf);
}

protocol::TensorSpec spec(const char* name, protocol::ElementType type, int64_t n) {
  auto created = protocol::TensorSpec::create(name, type, {1, n});
  EXPECT_TRUE(created.ok());
  return *created;
}

// Through a header: the features are found by name, whatever their order
// and whatever else is there.
TEST(DefaultEvictionTest, ReadsObservationsByHeader) {
  using protocol::ElementType;
  protocol::LogHeader header;
  header.features = {spec("use_def_density", ElementType::kFloat, 3),
                     spec("mask", ElementType::kInt64, 3),
                     spec("progress", ElementType::kFloat, 1),
                     spec("nr_urgent", ElementType::kFloat, 3),
                     spec("is_hint", ElementType::kInt64, 3),
                     spec("nr_broken_hints", ElementType::kFloat, 3),
                     spec("is_local", ElementType::kInt64, 3)};
  auto policy = DefaultEvictionPolicy::create(header);
  ASSERT_TRUE(policy.ok()) << policy.error().message();

  float weight[3] = {0.2f, 0.1f, 1};
  int64_t mask[3] = {1, 1, 1};
  float progress = 0.5f;
  float zeros[3] = {0, 0, 0};
  int64_t none[3] = {0, 0, 0};
  auto bytes = [](const auto& array) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(&array), sizeof(array));
  };
  std::vector<std::span<const std::byte>> tensors = {bytes(weight), bytes(mask),  bytes(progress),
                                                     bytes(zeros),  bytes(none),  bytes(zeros),
                                                     bytes(none)};
  EXPECT_EQ(policy->choose(tensors), 1);
  mask[1] = 0;
  EXPECT_EQ(policy->choose(tensors), 0);
}

TEST(DefaultEvictionTest, CreateNamesWhatIsMissing) {
  protocol::LogHeader header;
  header.features = {spec("mask", protocol::ElementType::kInt64, 3)};
  auto policy = DefaultEvictionPolicy::create(header);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(policy.error().message(), HasSubstr("'is_hint'"));

  header.features = {spec("mask", protocol::ElementType::kInt64, 3),
                     spec("is_hint", protocol::ElementType::kInt64, 2)};
  policy = DefaultEvictionPolicy::create(header);
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message(), HasSubstr("'is_hint' with 3 elements"));
}

/// An observation over `bytes`, one view per header feature.
struct Fixture {
  Fixture(const protocol::LogHeader& header, std::vector<std::byte> data) : bytes(std::move(data)) {
    size_t offset = 0;
    for (const auto& s : header.features) {
      views.emplace_back(bytes.data() + offset, s.byteSize());
      offset += s.byteSize();
    }
    observation.data = bytes;
    observation.tensors = views;
  }
  std::vector<std::byte> bytes;
  std::vector<std::span<const std::byte>> views;
  Observation observation;
};

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
  Fixture obs(emulated->header(), emulationObservation(weights, 0));
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
  Fixture told(clang->header(), emulationObservation(weights, 2));
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
