//===- server/fair_executor_test.cc - round-robin worker pool -------------===//
#include "mlgo/server/fair_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>

namespace mlgo::server {
namespace {

using namespace std::chrono_literals;

TEST(FairExecutor, KeysTakeTurns) {
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::mutex mutex;
  std::string order;
  {
    FairExecutor executor(1);
    std::promise<void> blocked;
    executor.post(0, [&, open] {
      blocked.set_value();
      open.wait();
    });
    blocked.get_future().wait(); // The only worker is busy; the rest queue.
    auto record = [&](char c) {
      return [&, c] {
        std::lock_guard lock(mutex);
        order += c;
      };
    };
    for (int i = 0; i < 4; ++i)
      executor.post(1, record('a'));
    for (int i = 0; i < 2; ++i)
      executor.post(2, record('b'));
    executor.post(3, record('c'));
    EXPECT_EQ(executor.queued(), 7u);
    gate.set_value();
  } // The destructor runs what is queued, then joins.
  // One flooding key cannot starve the others.
  EXPECT_EQ(order, "abcabaa");
}

TEST(FairExecutor, TasksOfOneKeyRunInOrderAndInParallelAcrossWorkers) {
  std::atomic<int> running{0}, peak{0};
  std::mutex mutex;
  std::vector<int> seen;
  {
    FairExecutor executor(4);
    for (int i = 0; i < 8; ++i)
      executor.post(static_cast<uint64_t>(i % 4), [&, i] {
        int now = ++running;
        int old = peak.load();
        while (now > old && !peak.compare_exchange_weak(old, now)) {
        }
        std::this_thread::sleep_for(20ms);
        --running;
        std::lock_guard lock(mutex);
        seen.push_back(i);
      });
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_GE(peak.load(), 2);
}

// Every worker of the first lane waits for something only a slot holder can
// give back (as resets waiting for a job slot do); the holder still runs.
TEST(FairExecutor, HoldingTasksRunWhileEveryWorkerIsBlocked) {
  std::promise<void> released;
  std::shared_future<void> slotFree = released.get_future().share();
  std::atomic<int> waiting{0};
  FairExecutor executor(2, 1);
  for (int i = 0; i < 2; ++i)
    executor.post(static_cast<uint64_t>(i), [&, slotFree] {
      ++waiting;
      slotFree.wait();
    });
  while (waiting < 2)
    std::this_thread::sleep_for(1ms);
  std::promise<void> ran;
  executor.postHolding(7, [&] {
    ran.set_value();
    released.set_value(); // The holder finishes and frees the slot.
  });
  EXPECT_EQ(ran.get_future().wait_for(10s), std::future_status::ready)
      << "the holding task queued behind blocked workers";
}

} // namespace
} // namespace mlgo::server
