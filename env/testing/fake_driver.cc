//===- env/testing/fake_driver.cc - an in-process compiler for tests ------===//
#include "fake_driver.h"

#include "fake_session.h"
#include "mlgo/protocol/stream_reader.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace mlgo::env::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool hangUntil(FakeDriver::State& state, Clock::time_point deadline,
               const std::atomic<bool>* cancel, support::Interrupt* interrupt) {
  std::unique_lock lock(state.mutex);
  ++state.hanging;
  state.changed.notify_all();
  bool woken = false;
  // Short slices: a cancel flag or an interrupt comes with no notification.
  while (!woken && Clock::now() < deadline) {
    state.changed.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(2)));
    woken = state.released || (cancel != nullptr && cancel->load());
    if (!woken && interrupt != nullptr && interrupt->armed()) {
      lock.unlock(); // The caller's check runs unlocked, as in a real wait.
      woken = interrupt->requested();
      lock.lock();
    }
  }
  --state.hanging;
  return woken;
}

FakeDriver::FakeDriver(FakeDriverOptions options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {}

FakeDriver::~FakeDriver() {
  releaseHangs();
}

namespace {

constexpr std::string_view kOptimizedText = "fake optimised IR of module ";
constexpr std::string_view kCorpusText = "not bitcode, module ";
constexpr std::string_view kCorpusEnd = ": the fake reads nothing else";

bool isOptimization(const CompileCommand& command) {
  return std::find(command.argv.begin(), command.argv.end(), "-emit-llvm-bc") !=
         command.argv.end();
}

} // namespace

std::string FakeDriver::moduleNameFor(const CompileCommand& command) const {
  {
    std::lock_guard lock(modulesMutex_);
    for (const auto& [name, module] : options_.modules) {
      std::string suffix = "/" + name + ".bc";
      for (const std::string& arg : command.argv)
        if (arg.ends_with(suffix))
          return name;
    }
  }
  // Otherwise the input says: a fake corpus's .bc, or what a fake
  // optimisation wrote (a twin).
  auto ir = std::find(command.argv.begin(), command.argv.end(), "ir");
  if (ir == command.argv.end() || std::next(ir) == command.argv.end())
    return "";
  std::ifstream in(*std::next(ir), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.starts_with(kOptimizedText))
    return text.substr(kOptimizedText.size());
  if (text.starts_with(kCorpusText))
    return text.substr(kCorpusText.size(), text.rfind(kCorpusEnd) - kCorpusText.size());
  return "";
}

FakeModule FakeDriver::moduleFor(const CompileCommand& command) const {
  std::string name = moduleNameFor(command);
  std::lock_guard lock(modulesMutex_);
  auto it = options_.modules.find(name);
  return it != options_.modules.end() ? it->second : options_.fallback;
}

void FakeDriver::setModule(const std::string& name, FakeModule module) {
  std::lock_guard lock(modulesMutex_);
  options_.modules[name] = std::move(module);
}

Result<ClangVersion> FakeDriver::version(support::CleanupScope&, const fs::path& clang,
                                         std::chrono::milliseconds) {
  return ClangVersion{clang, options_.version, options_.version + "\n"};
}

Result<std::vector<std::string>> FakeDriver::llvmOptions(support::CleanupScope&, const fs::path&,
                                                         std::chrono::milliseconds,
                                                         const fs::path&) {
  return options_.llvmOptions;
}

Result<ProblemProbe> FakeDriver::probe(support::CleanupScope&, const fs::path&, const Problem&,
                                       const ProblemOptions&,
                                       std::chrono::milliseconds, const fs::path&) {
  std::string stream;
  {
    std::lock_guard lock(modulesMutex_);
    stream = options_.probeStream.empty() ? options_.fallback.stream : options_.probeStream;
  }
  protocol::StreamReader reader;
  reader.feed(stream);
  reader.finish();
  protocol::LogEvent event;
  ProblemProbe probe;
  for (;;) {
    auto status = reader.next(event);
    if (!status.ok())
      return makeError(ErrorCode::kUnsupported, "fake probe: {}", status.error().message());
    if (*status != protocol::ReadStatus::kEvent)
      break;
    if (event.kind == protocol::EventKind::kObservation)
      ++probe.observations;
  }
  if (!reader.hasHeader())
    return makeError(ErrorCode::kUnsupported, "fake probe: the probe stream has no header");
  probe.header = reader.header();
  return probe;
}

Result<std::unique_ptr<CompilerSession>> FakeDriver::startSession(support::TempDir dir,
                                                                  CompileCommand command,
                                                                  const SessionLimits& limits) {
  if (!command.extraChannels.empty())
    return makeError(ErrorCode::kUnsupported, "the fake compiler driver plays one channel, not {}",
                     command.extraChannels.size() + 1);
  FakeModule module = moduleFor(command);
  {
    std::lock_guard lock(state_->mutex);
    ++state_->started;
    ++state_->live;
  }
  return makeFakeSession(state_, std::move(dir), std::move(command), limits, std::move(module));
}

Result<CompileReport> FakeDriver::runPlain(support::CleanupScope&, const CompileCommand& command,
                                           std::chrono::milliseconds timeout,
                                           const std::atomic<bool>* cancel, support::Spawner*,
                                           support::Interrupt* interrupt) {
  FakeModule module = moduleFor(command);
  bool optimization = isOptimization(command);
  {
    std::lock_guard lock(state_->mutex);
    ++(optimization ? state_->optimized : state_->plain);
  }
  // Woken early: by the caller's interrupt (kInterrupted, as runCompile
  // says), else cancelled or released.
  auto stopped = [&] {
    if (interrupt != nullptr && interrupt->requested())
      return makeError(ErrorCode::kInterrupted, "fake compiler interrupted; killed");
    return makeError(ErrorCode::kInternal, "fake compiler: cancelled");
  };
  CompileReport report;
  if (optimization && module.optimizeTime.count() > 0 &&
      hangUntil(*state_, Clock::now() + module.optimizeTime, cancel, interrupt))
    return stopped();
  switch (optimization ? module.optimizeFault : module.baselineFault) {
  case FakeFault::kHang:
    if (hangUntil(*state_, Clock::now() + timeout, cancel, interrupt))
      return stopped();
    return makeError(ErrorCode::kTimeout, "fake compiler did not finish within {} ms; killed",
                     timeout.count());
  case FakeFault::kDie:
    report.exit.signal = 9;
    return makeError(ErrorCode::kCompiler, "fake compiler {}", report.exit.describe());
  case FakeFault::kExitCode:
    report.exit.exited = true;
    report.exit.code = 1;
    return makeError(ErrorCode::kCompiler, "fake compiler {}", report.exit.describe());
  default:
    break;
  }
  report.exit.exited = true;
  if (optimization) {
    std::ofstream out(command.objectPath, std::ios::binary);
    out << kOptimizedText << moduleNameFor(command);
    if (!out.flush())
      return makeError(ErrorCode::kIo, "fake compiler cannot write {}",
                       command.objectPath.string());
    return report;
  }
  MLGO_TRY(writeFakeObject(command.objectPath, module.defaultScore));
  return report;
}

Result<ModuleScore> FakeDriver::score(ScoreKind, const CompileCommand& command) {
  std::ifstream in(command.objectPath);
  std::string magic, key;
  double value = 0;
  if (!in)
    return makeError(ErrorCode::kNotFound, "no object file {}", command.objectPath.string());
  if (!(in >> magic >> key >> value) || magic != "mlgo-fake-object" || key != "score")
    return makeError(ErrorCode::kParse, "{} is not a fake object", command.objectPath.string());
  return ModuleScore{value, {}};
}

void FakeDriver::releaseHangs() {
  std::lock_guard lock(state_->mutex);
  state_->released = true;
  state_->changed.notify_all();
}

bool FakeDriver::waitForHanging(size_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  return state_->changed.wait_for(lock, timeout, [&] { return state_->hanging >= count; });
}

size_t FakeDriver::sessionsStarted() const {
  std::lock_guard lock(state_->mutex);
  return state_->started;
}
size_t FakeDriver::liveSessions() const {
  std::lock_guard lock(state_->mutex);
  return state_->live;
}
size_t FakeDriver::plainCompiles() const {
  std::lock_guard lock(state_->mutex);
  return state_->plain;
}
size_t FakeDriver::optimizeCompiles() const {
  std::lock_guard lock(state_->mutex);
  return state_->optimized;
}
size_t FakeDriver::answersReceived() const {
  std::lock_guard lock(state_->mutex);
  return state_->answers;
}

Result<std::string> loadRecordedStream(std::string_view name) {
  fs::path path = fs::path(MLGO_TEST_DATA_DIR) / "streams" / std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kNotFound, "no recorded stream {}", path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Status writeFakeCorpus(const fs::path& dir, std::span<const std::string> modules) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "cannot create {}: {}", dir.string(), ec.message());
  std::string list;
  for (const std::string& name : modules) {
    fs::create_directories((dir / name).parent_path(), ec);
    // Distinct bytes: the baseline cache key hashes them.
    std::ofstream((dir / (name + ".bc")), std::ios::binary)
        << kCorpusText << name << kCorpusEnd;
    std::ofstream((dir / (name + ".cmd")), std::ios::binary) << std::string("-cc1\0-O2\0", 9);
    list += (list.empty() ? "\"" : ",\"") + name + "\"";
  }
  std::ofstream description(dir / "corpus_description.json");
  description << "{\"modules\":[" << list << "],\"has_thinlto\":false}\n";
  description.close();
  if (!description)
    return makeError(ErrorCode::kIo, "cannot write the corpus in {}", dir.string());
  return Status::success();
}

Result<std::unique_ptr<FakeEnvironment>> FakeEnvironment::create(FakeEnvironmentSetup setup) {
  std::unique_ptr<FakeEnvironment> out(new FakeEnvironment());
  std::string tmpl = (fs::temp_directory_path() / "mlgo-fake-env-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return makeError(ErrorCode::kIo, "cannot create a directory like {}", tmpl);
  out->dir_ = tmpl;
  MLGO_TRY(writeFakeCorpus(out->dir_ / "corpus", setup.modules));
  std::error_code ec;
  fs::create_directories(out->dir_ / "tmp", ec);
  if (setup.driver.fallback.stream.empty()) {
    auto stream = loadRecordedStream(setup.options.problem + ".stream");
    if (!stream.ok())
      return stream.error();
    setup.driver.fallback.stream = std::move(*stream);
  }
  out->driver_ = std::make_shared<FakeDriver>(std::move(setup.driver));
  setup.options.corpus = out->dir_ / "corpus";
  setup.options.tempDir = out->dir_ / "tmp";
  setup.options.useDiskCache = false;
  setup.options.driver = out->driver_;
  auto environment = Environment::create(setup.options);
  if (!environment.ok())
    return environment.error();
  out->environment_ = std::move(*environment);
  return out;
}

FakeEnvironment::~FakeEnvironment() {
  environment_.reset();
  driver_.reset();
  std::error_code ec;
  if (!dir_.empty())
    fs::remove_all(dir_, ec);
}

} // namespace mlgo::env::testing
