//===- env/job_slots_test.cc - the limit on concurrent compiler work -------===//
#include "job_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;

TEST(JobSlotsTest, LeasesCountAndRelease) {
  JobSlots slots(2);
  auto a = slots.acquire(support::Clock::now() + 1s);
  auto b = slots.acquire(support::Clock::now() + 1s);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(slots.inUse(), 2u);
  auto c = slots.acquire(support::Clock::now() + 50ms);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ErrorCode::kTimeout);
  a->release();
  a->release(); // Idempotent.
  EXPECT_EQ(slots.inUse(), 1u);
  auto d = slots.acquire(support::Clock::now() + 1s);
  ASSERT_TRUE(d.ok());
  JobSlots::Lease moved = std::move(*d);
  EXPECT_FALSE(d->held());
  EXPECT_TRUE(moved.held());
}

TEST(JobSlotsTest, NeverMoreHoldersThanSlots) {
  JobSlots slots(3);
  std::atomic<int> holders{0}, peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto lease = slots.acquire(support::Clock::now() + 10s);
        ASSERT_TRUE(lease.ok());
        int now = ++holders;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(100us);
        --holders;
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(slots.inUse(), 0u);
}

TEST(JobSlotsTest, CloseWakesWaitersAtOnce) {
  JobSlots slots(1);
  auto held = slots.acquire(support::Clock::now() + 1s);
  ASSERT_TRUE(held.ok());
  std::optional<Result<JobSlots::Lease>> waited;
  auto start = support::Clock::now();
  std::thread waiter([&] { waited.emplace(slots.acquire(support::Clock::now() + 30s)); });
  std::this_thread::sleep_for(20ms);
  slots.close();
  waiter.join();
  EXPECT_LT(support::Clock::now() - start, 5s);
  ASSERT_FALSE(waited->ok());
  EXPECT_EQ(waited->error().code(), ErrorCode::kIo);
  EXPECT_FALSE(slots.acquire(support::Clock::now() + 1s).ok());
}

TEST(JobSlotsTest, ZeroMeansOne) {
  EXPECT_EQ(JobSlots(0).capacity(), 1u);
}

} // namespace
} // namespace mlgo::env
