//===- env/testing/test_util.h - helpers for env/ tests ---------*- C++ -*-===//
///
/// \file
/// Scripted streams for the fake compiler, and counters of the resources a
/// process holds (descriptors, child processes, temporary directories) for
/// leak checks.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_TESTING_TEST_UTIL_H
#define MLGO_ENV_TESTING_TEST_UTIL_H

#include "mlgo/env/compiler_session.h"
#include "mlgo/protocol/stream_writer.h"
#include "mlgo/support/interrupt.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace mlgo::env::testing {

/// An Observation viewing `bytes`, one view per feature of `header` in order.
struct ObservationFixture {
  ObservationFixture(const protocol::LogHeader& header, std::vector<std::byte> data)
      : bytes(std::move(data)) {
    size_t offset = 0;
    for (const auto& spec : header.features) {
      views.emplace_back(bytes.data() + offset, spec.byteSize());
      offset += spec.byteSize();
    }
    observation.data = bytes;
    observation.tensors = views;
  }
  std::vector<std::byte> bytes;
  std::vector<std::span<const std::byte>> views;
  Observation observation;
};

/// Open descriptors of this process (entries of /proc/self/fd).
size_t openDescriptors();
/// Live or unreaped child processes of this process.
size_t childProcesses();
/// Entries of `dir` whose name starts with `prefix`.
size_t entriesWithPrefix(const std::filesystem::path& dir, std::string_view prefix);

/// A Ctrl-C for interrupt tests: `check` says yes once fire()d from another
/// thread; `firedAt` is when (read it after joining that thread).
struct CtrlC {
  std::atomic<bool> fired{false};
  support::Clock::time_point firedAt;
  support::InterruptCheck check = [this] { return fired.load(); };
  void fire() {
    firedAt = support::Clock::now();
    fired = true;
  }
  /// A thread that fires `settle` after `ready()` first holds (polled every
  /// 5 ms), or after 10 s anyway so that a test never hangs on it.
  std::thread fireWhen(std::function<bool()> ready,
                       std::chrono::milliseconds settle = std::chrono::milliseconds(0)) {
    return std::thread([this, ready = std::move(ready), settle] {
      auto until = support::Clock::now() + std::chrono::seconds(10);
      while (!ready() && support::Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::this_thread::sleep_for(settle);
      fire();
    });
  }
};

/// Writes `contents` to `path` (binary), failing the test on error.
void writeFile(const std::filesystem::path& path, std::string_view contents);
std::string readFile(const std::filesystem::path& path);

/// A small inlining-like header: features a (int64 [1]), b (float [2]),
/// inlining_default (int64 [1]); advice inlining_decision (int64 [1]).
protocol::LogHeader inliningLikeHeader();
/// An eviction-like header: mask (int64 [1,4]), weight (float [1,4]);
/// advice index_to_evict (int64 [1]).
protocol::LogHeader evictionLikeHeader();

/// Builds a stream: header, then for each context its observations, each
/// given as the raw bytes of all features.
struct ScriptedContext {
  std::string name;
  std::vector<std::vector<std::byte>> observations;
};
std::string buildStream(const protocol::LogHeader& header,
                        const std::vector<ScriptedContext>& contexts);

/// Raw bytes of an inliningLikeHeader() observation.
std::vector<std::byte> inliningObservation(int64_t a, float b0, float b1, int64_t defaultDecision);
/// Raw bytes of an evictionLikeHeader() observation.
std::vector<std::byte> evictionObservation(std::array<int64_t, 4> mask);

/// Writes `<dir>/<name>.script` for the fake compiler; `lines` follow the
/// magic line. Returns its path.
std::filesystem::path writeScript(const std::filesystem::path& dir, const std::string& name,
                                  const std::vector<std::string>& lines);

/// A CompileCommand running the fake compiler on `script` inside `dir`.
CompileCommand fakeCommand(const std::filesystem::path& dir, const std::filesystem::path& script);

/// One C source of a test corpus and the flags it is compiled with.
struct TestSource {
  std::string name; ///< Becomes module "<name>.o".
  std::string code;
  std::vector<std::string> flags = {"-O2"};
};
/// Compiles each source with clang-22 (-Xclang -fembed-bitcode=all) into
/// `<dir>/obj` and extracts a corpus into `<dir>/corpus`, which it returns.
std::filesystem::path buildTestCorpus(const std::filesystem::path& dir,
                                      const std::vector<TestSource>& sources);

/// Sections flagged X in an `llvm-readelf -S -W` listing: how many and their
/// total size (an independent check of the in-process score).
struct ReadelfExecutable {
  uint64_t bytes = 0;
  int sections = 0;
};
ReadelfExecutable parseReadelfExecutable(const std::string& listing);

} // namespace mlgo::env::testing

#endif // MLGO_ENV_TESTING_TEST_UTIL_H
