//===- policy/default_eviction_test.cc - the default eviction emulation -----===//
///
/// One test per rule of default_eviction.h, on hand-made observations of
/// four candidate registers plus the live range itself (column 4), and its
/// reading of observations through a header. How the regalloc problem binds
/// it: env/regalloc_problems_test.cc.
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/default_eviction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::policy {
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
// clang would have done (research/regalloc_poisoned_steps.py counts these).
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

} // namespace
} // namespace mlgo::policy
