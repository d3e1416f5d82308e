//===- env/prepare_corpus.cc - optimised IR for a whole corpus ------------===//
#include "mlgo/env/prepare_corpus.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>

namespace mlgo::env {

PrepareCorpusReport
prepareCorpus(Environment& environment, unsigned threads,
              const std::function<void(const std::string&, const std::string&)>& onModule) {
  const auto& modules = environment.corpus().modules();
  PrepareCorpusReport report;
  report.modules = modules.size();
  std::vector<std::string> errors(modules.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  auto start = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t i = next++; i < modules.size(); i = next++) {
      auto prepared = environment.prepareModule(modules[i].name);
      std::lock_guard lock(mutex);
      if (!prepared.ok())
        errors[i] = prepared.error().message();
      else if (!prepared->optimizedIr)
        ++report.fullCompile;
      else
        ++(prepared->built ? report.built : report.reused);
      if (onModule)
        onModule(modules[i].name, errors[i]);
    }
  };
  if (threads == 0)
    threads = environment.describe().jobs;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(threads, 1u); ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break; // Fewer threads do the same work.
    }
  }
  work();
  for (std::thread& thread : pool)
    thread.join();
  for (size_t i = 0; i < modules.size(); ++i)
    if (!errors[i].empty())
      report.failures.emplace_back(modules[i].name, std::move(errors[i]));
  report.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace mlgo::env
