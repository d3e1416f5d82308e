//===- python/src/parallel_for_test.cc ------------------------------------===//
#include "parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>

namespace mlgo::python {
namespace {

using namespace std::chrono_literals;

TEST(ParallelFor, RunsEveryIndexConcurrentlyAndReturnsWhenAllFinished) {
  ParallelFor pool;
  for (size_t n : {1u, 4u, 2u, 7u}) {
    std::latch allStarted(static_cast<std::ptrdiff_t>(n));
    std::vector<std::atomic<int>> calls(n);
    // Every body waits for all others: this only ends if they run at once.
    pool.run(
        n,
        [&](size_t i) {
          allStarted.arrive_and_wait();
          calls[i]++;
        },
        [] {}, 10ms);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(calls[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, PollsWhileWaitingAndStillWaitsForTheBodies) {
  ParallelFor pool;
  std::atomic<bool> release{false};
  std::atomic<int> polls{0};
  std::atomic<bool> finished{false};
  pool.run(
      2,
      [&](size_t) {
        while (!release)
          std::this_thread::sleep_for(1ms);
        finished = true;
      },
      [&] {
        if (++polls == 3)
          release = true; // what module.cc does on Ctrl-C: make the bodies end
      },
      5ms);
  EXPECT_GE(polls.load(), 3);
  EXPECT_TRUE(finished.load());
}

TEST(ParallelFor, NothingToDo) {
  ParallelFor pool;
  int polls = 0;
  pool.run(0, [](size_t) { FAIL(); }, [&] { ++polls; }, 1ms);
  EXPECT_EQ(polls, 0);
}

} // namespace
} // namespace mlgo::python
