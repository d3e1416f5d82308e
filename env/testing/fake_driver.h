//===- env/testing/fake_driver.h - an in-process compiler for tests -*- C++ -*-===//
///
/// \file
/// A CompilerDriver (mlgo/env/compiler_driver.h) that runs no process: each
/// interactive compile replays a recorded clang stream (the bytes clang
/// writes on its fifo: header line, context records, observations) through
/// the same StreamReader the real session uses, one observation per answer,
/// and each compile "writes" an object file that holds nothing but its
/// score. Unit tests build an Environment on it with no clang-22 at all.
///
/// The fake compiler of one compile plays the recorded stream like clang:
/// it writes everything up to and including observation k once k answers
/// have arrived, then waits for the next answer; after the last answer it
/// writes the rest and closes its end. Faults (FakeFault) replace that
/// behaviour at observation `faultAfter` (0-based: after that many
/// answers); a `faultAfter` at or past the stream's observation count
/// means at the end of the stream.
///
/// A session plays one channel: a command with extra channels
/// (CompileCommand::extraChannels) is refused (kUnsupported).
///
/// Modules are told apart by their bitcode path in the command's argv
/// (`.../<module name>.bc`); a module with no entry plays `fallback`. An
/// optimisation compile (argv has `-emit-llvm-bc`) writes the text `fake
/// optimised IR of module <name>` as its output, and a compile whose `-x ir`
/// input holds that text plays module <name> (episodes of the register
/// allocation problems compile such twins, optimized_ir_cache.h).
///
/// Thread safety: every member is thread-safe; sessions are used by one
/// thread at a time (as CompilerSession requires). Blocking: only kHang
/// (and optimizeTime) blocks, until the compile timeout, the caller's cancel
/// flag (SessionLimits::cancel, runPlain's `cancel`), runPlain's armed
/// `interrupt` saying yes (kInterrupted; asked every few milliseconds) or
/// releaseHangs().
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_TESTING_FAKE_DRIVER_H
#define MLGO_ENV_TESTING_FAKE_DRIVER_H

#include "mlgo/env/compiler_driver.h"
#include "mlgo/env/environment.h"

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace mlgo::env::testing {

enum class FakeFault : uint8_t {
  kNone,
  /// The stream stops in the middle of observation `faultAfter` and the
  /// compiler exits 0: a malformed (truncated) stream.
  kTruncate,
  /// The compiler crashes (SIGSEGV) instead of sending observation
  /// `faultAfter`: its stream ends there, finish() reports the signal. For a
  /// plain compile: it crashes.
  kDie,
  /// The compiler stops instead of sending observation `faultAfter` (for a
  /// plain compile: at once) and answers nothing more: calls block until the
  /// compile timeout (kTimeout), a cancel flag or releaseHangs() (kCompiler
  /// "killed").
  kHang,
  /// The compiler writes a line that is not a record in place of
  /// observation `faultAfter` and exits.
  kMalformed,
  /// The compiler never opens its channel (a module without decisions).
  kNeverOpen,
  /// The compiler plays the whole stream, then exits with code 1.
  kExitCode,
};

/// How compiles of one module go.
struct FakeModule {
  /// The recorded clang stream (loadRecordedStream()).
  std::string stream;
  FakeFault fault = FakeFault::kNone;
  uint64_t faultAfter = 0;
  /// The score of an interactive compile's object...
  double policyScore = 100;
  /// ...unless this computes it from the answers (advice bytes, in order).
  std::function<double(const std::vector<std::vector<std::byte>>&)> scoreOfAnswers;
  /// The default (plain) compile: its score and its fault (kDie, kHang or
  /// kExitCode; others are ignored).
  double defaultScore = 100;
  FakeFault baselineFault = FakeFault::kNone;
  /// The optimisation compile: its fault (kDie, kHang or kExitCode), and
  /// how long it takes before it ends (cancellable, like kHang).
  FakeFault optimizeFault = FakeFault::kNone;
  std::chrono::milliseconds optimizeTime{0};
};

struct FakeDriverOptions {
  /// Modules by corpus module name; others play `fallback`.
  std::map<std::string, FakeModule> modules;
  FakeModule fallback;
  /// What probe() answers with: this stream's header; empty = fallback's.
  std::string probeStream;
  /// The "clang --version" first line.
  std::string version = "fake clang version 22 (mlgo-env test driver)";
  /// What llvmOptions() lists.
  std::vector<std::string> llvmOptions;
};

class FakeDriver final : public CompilerDriver {
public:
  explicit FakeDriver(FakeDriverOptions options);
  ~FakeDriver() override;

  Result<ClangVersion> version(support::CleanupScope& scope, const std::filesystem::path& clang,
                               std::chrono::milliseconds timeout) override;
  Result<std::vector<std::string>> llvmOptions(support::CleanupScope& scope,
                                               const std::filesystem::path& clang,
                                               std::chrono::milliseconds timeout,
                                               const std::filesystem::path& tempParent) override;
  Result<ProblemProbe> probe(support::CleanupScope& scope, const std::filesystem::path& clang,
                             const Problem& problem,
                             const ProblemOptions& options, std::chrono::milliseconds timeout,
                             const std::filesystem::path& tempParent) override;
  Result<std::unique_ptr<CompilerSession>>
  startSession(support::TempDir dir, CompileCommand command, const SessionLimits& limits) override;
  Result<CompileReport> runPlain(support::CleanupScope& scope, const CompileCommand& command,
                                 std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                 support::Spawner* spawner, support::Interrupt* interrupt) override;
  /// Reads the score the fake wrote into the command's object file.
  Result<ModuleScore> score(ScoreKind kind, const CompileCommand& command) override;

  /// Replaces (or adds) a module's behaviour; compiles already started keep
  /// the old one.
  void setModule(const std::string& name, FakeModule module);

  /// Wakes every hanging compile, present and future: they fail (kCompiler).
  void releaseHangs();
  /// Waits until at least `count` compiles hang; false after `timeout`.
  bool waitForHanging(size_t count, std::chrono::milliseconds timeout);

  /// Counters, for tests: interactive compiles started and still alive,
  /// plain compiles run, answers received by all sessions.
  size_t sessionsStarted() const;
  size_t liveSessions() const;
  size_t plainCompiles() const;
  size_t answersReceived() const;
  /// Optimisation compiles run (not counted in plainCompiles()).
  size_t optimizeCompiles() const;

  /// Shared with the sessions (which may outlive nothing but the driver).
  struct State {
    mutable std::mutex mutex;
    std::condition_variable changed;
    bool released = false;
    size_t hanging = 0;
    size_t started = 0;
    size_t live = 0;
    size_t plain = 0;
    size_t answers = 0;
    size_t optimized = 0;
  };

private:
  FakeModule moduleFor(const CompileCommand& command) const;
  /// The corpus module a command compiles (see the file comment), or "".
  std::string moduleNameFor(const CompileCommand& command) const;

  mutable std::mutex modulesMutex_;
  FakeDriverOptions options_;
  std::shared_ptr<State> state_;
};

/// Blocks like a hung compiler until `deadline`, `cancel`, `interrupt`
/// (asked unlocked, when armed) or releaseHangs(): true when woken early
/// (cancelled, interrupted or released), false at the deadline.
bool hangUntil(FakeDriver::State& state, std::chrono::steady_clock::time_point deadline,
               const std::atomic<bool>* cancel, support::Interrupt* interrupt = nullptr);

/// A recorded stream checked into tests/data/streams/ (see its README),
/// e.g. "inlining.stream". kNotFound naming the file.
Result<std::string> loadRecordedStream(std::string_view name);

/// Writes a corpus of `modules` (names) into `dir`: for each a `.bc` that
/// is not bitcode but names its module (distinct bytes: cache keys hash
/// them), and a `.cmd` `-cc1 -O2`.
Status writeFakeCorpus(const std::filesystem::path& dir, std::span<const std::string> modules);

/// An Environment on a FakeDriver over a fake corpus, in a fresh directory
/// under $TMPDIR that goes with it (after the Environment).
struct FakeEnvironmentSetup {
  /// Corpus modules (names).
  std::vector<std::string> modules = {"alpha", "beta"};
  /// The driver; an empty fallback stream becomes the recorded stream of
  /// `options.problem` ("inlining.stream", "regalloc-priority.stream").
  FakeDriverOptions driver;
  /// `corpus`, `tempDir` and `driver` are filled in; the disk cache is off.
  EnvironmentOptions options;
};

class FakeEnvironment {
public:
  static Result<std::unique_ptr<FakeEnvironment>> create(FakeEnvironmentSetup setup);
  ~FakeEnvironment();
  FakeEnvironment(const FakeEnvironment&) = delete;
  FakeEnvironment& operator=(const FakeEnvironment&) = delete;

  Environment& environment() { return *environment_; }
  FakeDriver& driver() { return *driver_; }
  const std::filesystem::path& dir() const { return dir_; }

private:
  FakeEnvironment() = default;
  std::filesystem::path dir_;
  std::shared_ptr<FakeDriver> driver_;
  std::unique_ptr<Environment> environment_;
};

} // namespace mlgo::env::testing

#endif // MLGO_ENV_TESTING_FAKE_DRIVER_H
