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
        [&](size_t i, bool) {
          allStarted.arrive_and_wait();
          calls[i]++;
        },
        [] {}, 10ms);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(calls[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, ALoneCallRunsOnTheCallingThread) {
  ParallelFor pool;
  std::thread::id ranOn;
  bool onCaller = false;
  pool.run(
      1,
      [&](size_t, bool caller) {
        ranOn = std::this_thread::get_id();
        onCaller = caller;
      },
      [] { FAIL() << "nothing to poll for"; }, 1ms);
  EXPECT_EQ(ranOn, std::this_thread::get_id());
  EXPECT_TRUE(onCaller);
}

TEST(ParallelFor, TheCallerTakesAShareThenPollsWhileTheOthersRun) {
  ParallelFor pool;
  std::atomic<bool> release{false};
  std::atomic<int> polls{0};
  std::atomic<int> finished{0};
  std::atomic<int> onCallerCount{0};
  std::atomic<int> workersIn{0};
  const auto caller = std::this_thread::get_id();
  pool.run(
      3,
      [&](size_t, bool onCaller) {
        EXPECT_EQ(onCaller, std::this_thread::get_id() == caller);
        if (onCaller) {
          ++onCallerCount; // Once both pool threads hold an index, the caller waits and polls.
          while (workersIn < 2)
            std::this_thread::sleep_for(1ms);
        } else {
          ++workersIn;
          while (!release)
            std::this_thread::sleep_for(1ms);
        }
        ++finished;
      },
      [&] {
        if (++polls == 3)
          release = true; // what module.cc does on Ctrl-C: make the bodies end
      },
      5ms);
  EXPECT_EQ(onCallerCount.load(), 1);
  EXPECT_GE(polls.load(), 3);
  EXPECT_EQ(finished.load(), 3);
}

TEST(ParallelFor, NothingToDo) {
  ParallelFor pool;
  int polls = 0;
  pool.run(0, [](size_t, bool) { FAIL(); }, [&] { ++polls; }, 1ms);
  EXPECT_EQ(polls, 0);
}

} // namespace
} // namespace mlgo::python
