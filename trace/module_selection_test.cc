//===- trace/module_selection_test.cc - choosing the traced modules ---------===//
#include "mlgo/trace/module_selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace mlgo::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> names(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back("dir/module" + std::to_string(i) + ".o");
  return out;
}

std::vector<uint64_t> sizes(size_t n) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(1000 + (i * 7919) % 500);
  return out;
}

std::set<std::string> chosen(const std::vector<std::string>& all,
                             const std::vector<size_t>& picked) {
  std::set<std::string> out;
  for (size_t i : picked)
    out.insert(all[i]);
  return out;
}

TEST(ModuleSelection, SameSeedSameModulesInSameOrder) {
  auto all = names(40);
  SelectionOptions options{.samplingRate = 0.25, .seed = 7, .moduleFilter = ""};
  auto a = selectModules(all, sizes(40), options);
  auto b = selectModules(all, sizes(40), options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 10u);
  EXPECT_EQ(*a, *b);
}

TEST(ModuleSelection, SeedChangesTheSample) {
  auto all = names(40);
  int differing = 0;
  auto base = selectModules(all, sizes(40), {0.25, 1, ""});
  ASSERT_TRUE(base.ok());
  for (uint64_t seed = 2; seed < 12; ++seed) {
    auto other = selectModules(all, sizes(40), {0.25, seed, ""});
    ASSERT_TRUE(other.ok());
    differing += chosen(all, *other) != chosen(all, *base);
  }
  EXPECT_GE(differing, 9);
}

TEST(ModuleSelection, ListingOrderDoesNotMatter) {
  auto all = names(30);
  auto size = sizes(30);
  std::vector<std::string> reversed(all.rbegin(), all.rend());
  std::vector<uint64_t> reversedSizes(size.rbegin(), size.rend());
  auto a = selectModules(all, size, {0.3, 5, ""});
  auto b = selectModules(reversed, reversedSizes, {0.3, 5, ""});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::string> namesA, namesB;
  for (size_t i : *a)
    namesA.push_back(all[i]);
  for (size_t i : *b)
    namesB.push_back(reversed[i]);
  EXPECT_EQ(namesA, namesB);
}

TEST(ModuleSelection, HigherRateOnlyAddsModules) {
  auto all = names(50);
  auto small = selectModules(all, sizes(50), {0.1, 3, ""});
  auto large = selectModules(all, sizes(50), {0.6, 3, ""});
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_EQ(small->size(), 5u);
  EXPECT_EQ(large->size(), 30u);
  auto s = chosen(all, *small), l = chosen(all, *large);
  EXPECT_TRUE(std::includes(l.begin(), l.end(), s.begin(), s.end()));
}

TEST(ModuleSelection, OrderIsLargestFirstThenByName) {
  std::vector<std::string> all = {"b.o", "a.o", "c.o", "d.o"};
  auto picked = selectModules(all, {10, 30, 10, 20}, {1.0, 0, ""});
  ASSERT_TRUE(picked.ok());
  EXPECT_THAT(*picked, ElementsAre(1, 3, 0, 2));
}

TEST(ModuleSelection, RateBounds) {
  auto all = names(10);
  auto none = selectModules(all, sizes(10), {0.0, 0, ""});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto one = selectModules(all, sizes(10), {0.01, 0, ""});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  auto bad = selectModules(all, sizes(10), {1.5, 0, ""});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), HasSubstr("--sampling-rate"));
}

TEST(ModuleSelection, FilterMatchesWholeNames) {
  std::vector<std::string> all = {"sha256.o", "bignum.o", "sha1.o", "xsha256.o"};
  auto picked = selectModules(all, {1, 2, 3, 4}, {1.0, 0, "sha.*"});
  ASSERT_TRUE(picked.ok());
  EXPECT_EQ(chosen(all, *picked), (std::set<std::string>{"sha256.o", "sha1.o"}));
  auto bad = selectModules(all, {1, 2, 3, 4}, {1.0, 0, "sha("});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), HasSubstr("--module_filter"));
}

TEST(ModuleSelection, RankIsAPureFunctionOfNameAndSeed) {
  EXPECT_EQ(moduleRank("sha256.o", 1), moduleRank("sha256.o", 1));
  EXPECT_NE(moduleRank("sha256.o", 1), moduleRank("sha256.o", 2));
  EXPECT_NE(moduleRank("sha256.o", 1), moduleRank("sha257.o", 1));
}

TEST(ModuleSelection, ShardsPartitionTheSampleAndInterleaveBackToItsOrder) {
  auto all = names(41);
  auto whole = selectModules(all, sizes(41), {0.8, 5, ""});
  ASSERT_TRUE(whole.ok());
  const uint32_t count = 3;
  std::vector<std::vector<size_t>> shards;
  for (uint32_t k = 0; k < count; ++k) {
    SelectionOptions options{.samplingRate = 0.8, .seed = 5, .moduleFilter = ""};
    options.shardIndex = k;
    options.shardCount = count;
    auto shard = selectModules(all, sizes(41), options);
    ASSERT_TRUE(shard.ok());
    shards.push_back(*shard);
  }
  // Round-robin over the shards gives the unsharded order back, module for module.
  std::vector<size_t> merged;
  for (size_t i = 0; merged.size() < whole->size(); ++i)
    for (const auto& shard : shards)
      if (i < shard.size())
        merged.push_back(shard[i]);
  EXPECT_EQ(merged, *whole);
  EXPECT_EQ(shards[0].size(), (whole->size() + 2) / 3);
}

TEST(ModuleSelection, ShardTextIsParsedAndChecked) {
  SelectionOptions options;
  ASSERT_TRUE(parseShard("2/5", options).ok());
  EXPECT_EQ(options.shardIndex, 2u);
  EXPECT_EQ(options.shardCount, 5u);
  for (const char* bad : {"5/5", "1/0", "1", "a/3", "1/3x", "-1/3", "/3", "1/"}) {
    Status status = parseShard(bad, options);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.error().message(), HasSubstr("expected K/N")) << bad;
  }
  SelectionOptions outOfRange{.samplingRate = 1.0, .seed = 0, .moduleFilter = ""};
  outOfRange.shardIndex = 3;
  outOfRange.shardCount = 3;
  auto refused = selectModules(names(4), sizes(4), outOfRange);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message(), HasSubstr("--shard=3/3"));
}

} // namespace
} // namespace mlgo::trace
