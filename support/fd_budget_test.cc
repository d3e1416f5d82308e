//===- support/fd_budget_test.cc - descriptors an environment needs -------===//
#include "mlgo/support/fd_budget.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

namespace mlgo::support {
namespace {

TEST(FdBudgetTest, NeededAndCarriedAgree) {
  for (unsigned jobs : {1u, 2u, 64u})
    for (size_t episodes : {size_t(0), size_t(1), size_t(256), size_t(1024)}) {
      uint64_t needed = descriptorsNeeded(episodes, jobs);
      EXPECT_EQ(episodesCarried(needed, jobs), episodes) << jobs << " jobs";
      if (episodes > 0)
        EXPECT_EQ(episodesCarried(needed - 1, jobs), episodes - 1) << jobs << " jobs";
    }
}

TEST(FdBudgetTest, ALimitBelowTheReserveCarriesNothing) {
  EXPECT_EQ(episodesCarried(0, 2), 0u);
  EXPECT_EQ(episodesCarried(kDescriptorReserve + 2 * kDescriptorsPerCompile, 2), 0u);
}

TEST(FdBudgetTest, RaiseFileLimitRaisesTheSoftLimitToTheHardOne) {
  auto limit = raiseFileLimit();
  ASSERT_TRUE(limit.ok()) << limit.error().message();
  struct rlimit now;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(limit->soft, static_cast<uint64_t>(now.rlim_cur));
  EXPECT_EQ(limit->hard, static_cast<uint64_t>(now.rlim_max));
  EXPECT_LE(limit->soft, limit->hard);
}

} // namespace
} // namespace mlgo::support
