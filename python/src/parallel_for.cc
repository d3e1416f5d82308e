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

void ParallelFor::run(size_t n, const std::function<void(size_t)>& body,
                      const std::function<void()>& poll, std::chrono::milliseconds pollEvery) {
  if (n == 0)
    return;
  std::unique_lock lock(mutex_);
  while (threads_.size() < n && threads_.size() < kMaxThreads)
    threads_.emplace_back([this] { worker(); });
  body_ = &body;
  next_ = 0;
  total_ = n;
  finished_ = 0;
  work_.notify_all();
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
    (*body)(index);
    lock.lock();
    if (++finished_ == total_)
      done_.notify_one();
  }
}

} // namespace mlgo::python
