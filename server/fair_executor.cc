//===- server/fair_executor.cc - round-robin worker pool ------------------===//
#include "mlgo/server/fair_executor.h"

namespace mlgo::server {

FairExecutor::FairExecutor(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < std::max(1u, threads); ++i)
    threads_.emplace_back([this] { work(); });
}

FairExecutor::~FairExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void FairExecutor::post(uint64_t key, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queues_[key].push_back(std::move(task));
    ++queued_;
  }
  ready_.notify_one();
}

size_t FairExecutor::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

bool FairExecutor::takeNext(std::function<void()>& task) {
  if (queues_.empty())
    return false;
  // The first key after the one served last, wrapping around.
  auto it = queues_.upper_bound(lastKey_);
  if (it == queues_.end())
    it = queues_.begin();
  lastKey_ = it->first;
  task = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty())
    queues_.erase(it);
  --queued_;
  return true;
}

void FairExecutor::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queues_.empty(); });
      if (!takeNext(task))
        return; // Stopping and drained.
    }
    task();
  }
}

} // namespace mlgo::server
