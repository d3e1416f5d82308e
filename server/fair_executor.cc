//===- server/fair_executor.cc - round-robin worker pool ------------------===//
#include "mlgo/server/fair_executor.h"

namespace mlgo::server {

FairExecutor::FairExecutor(unsigned threads, unsigned holdingThreads)
    : lane_(std::max(1u, threads)),
      holding_(holdingThreads > 0 ? std::make_unique<Lane>(holdingThreads) : nullptr) {}

FairExecutor::~FairExecutor() = default;

void FairExecutor::post(uint64_t key, std::function<void()> task) {
  lane_.post(key, std::move(task));
}

void FairExecutor::postHolding(uint64_t key, std::function<void()> task) {
  (holding_ ? *holding_ : lane_).post(key, std::move(task));
}

size_t FairExecutor::queued() const {
  return lane_.queued() + (holding_ ? holding_->queued() : 0);
}

FairExecutor::Lane::Lane(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i)
    threads_.emplace_back([this] { work(); });
}

FairExecutor::Lane::~Lane() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void FairExecutor::Lane::post(uint64_t key, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queues_[key].push_back(std::move(task));
    ++queued_;
  }
  ready_.notify_one();
}

size_t FairExecutor::Lane::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

bool FairExecutor::Lane::takeNext(std::function<void()>& task) {
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

void FairExecutor::Lane::work() {
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
