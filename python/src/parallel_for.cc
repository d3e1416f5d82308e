//===- python/src/parallel_for.cc - blocking work off the Python thread ---===//
#include "parallel_for.h"

namespace mlgo::python {

ParallelFor::~ParallelFor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& thread : threads_)
    thread.join();
}

void ParallelFor::run(size_t n, const Body& body, const std::function<void()>& poll,
                      std::chrono::milliseconds pollEvery) {
  if (n == 0)
    return;
  if (n == 1) { // The common lone call: no lock, no pool, no wake-up.
    body(0, true);
    return;
  }
  std::unique_lock lock(mutex_);
  while (threads_.size() < n - 1 && threads_.size() < kMaxThreads)
    threads_.emplace_back([this] { worker(); });
  body_ = &body;
  next_ = 0;
  total_ = n;
  finished_ = 0;
  work_.notify_all();
  // The calling thread takes its share before it waits.
  while (next_ < total_) {
    size_t index = next_++;
    lock.unlock();
    body(index, true);
    lock.lock();
    ++finished_;
  }
  while (finished_ < total_) {
    if (done_.wait_for(lock, pollEvery, [&] { return finished_ >= total_; }))
      break;
    lock.unlock();
    poll();
    lock.lock();
  }
  body_ = nullptr;
  total_ = 0;
}

void ParallelFor::worker() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || next_ < total_; });
    if (stopping_)
      return;
    size_t index = next_++;
    const auto* body = body_;
    lock.unlock();
    (*body)(index, false);
    lock.lock();
    if (++finished_ == total_)
      done_.notify_one();
  }
}

} // namespace mlgo::python
