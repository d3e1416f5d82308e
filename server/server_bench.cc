//===- server/server_bench.cc - server overhead per step ------------------===//
///
/// Measures what mlgo-env adds to each step, with clang's own time taken out:
///  1. records real clang-22 streams (inlining on a -Oz demo module, regalloc
///     eviction on a -O2 one), with the object and regalloc remarks;
///  2. builds a one-module corpus whose "bitcode" is a fake-compiler script
///     replaying that stream (the fake reads each answer, then sends the next
///     recorded observation at once), behind a wrapper that hands everything
///     else (--version, the capability probe) to the real clang;
///  3. serves it with `mlgo-env serve --listen=unix:...` and steps episodes
///     from a C++ client over the Unix socket: time per step round trip
///     (client send -> server -> fifo -> fake compiler -> server -> client);
///  4. in the same run, a minimal three-process relay with the same message
///     sizes (agent -> relay -> compiler -> relay -> agent over pipes,
///     blocking I/O, no parsing): the floor for any host; prints both
///     medians and their ratio (target: the server within 2x of it, as the serving issue set it);
///  5. runs bench/server_client.py for the Python client's steps/s.
///
/// Usage: bench_server_step [episodes=20].
///
//===----------------------------------------------------------------------===//
#include "support/fake_corpus.h"
#include "support/server_process.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/env/environment.h"
#include "mlgo/env/problem.h"
#include "mlgo/protocol/advice.h"
#include "mlgo/protocol/observation_codec.h"

#include <llvm/Support/JSON.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace mlgo;

namespace {

struct Setup {
  std::string problem;
  std::string module;
  std::string variant;
};

/// Records clang's stream for one module and builds the fake corpus
/// (support/fake_corpus.h); exits on failure.
testing::FakeCorpus recordCorpus(const Setup& setup) {
  auto fake = testing::makeFakeCorpus({setup.problem, setup.module, setup.variant});
  if (!fake.error.empty()) {
    std::fprintf(stderr, "bench: %s\n", fake.error.c_str());
    std::exit(1);
  }
  std::printf("%s: recorded %d observations of %s\n", setup.problem.c_str(), fake.observations,
              setup.module.c_str());
  return fake;
}

bool readExact(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// On-CPU nanoseconds of all of a process's threads so far (schedstat: exact,
/// where /proc/PID/stat counts clock ticks of 10 ms).
double cpuNanos(pid_t pid) {
  double total = 0;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    double onCpu = 0;
    if (in >> onCpu)
      total += onCpu;
  }
  return total;
}

/// Message sizes of one step, as the server run saw them.
struct StepSizes {
  size_t request = 0;     ///< Agent's step line.
  size_t advice = 8;      ///< Host to compiler.
  size_t observation = 0; ///< Compiler to host (stream bytes per observation).
  size_t reply = 0;       ///< Host's step reply line.
};

/// The floor a server could reach: agent -> relay -> compiler -> relay ->
/// agent, three processes, blocking reads and writes of fixed sizes over
/// pipes, no parsing. Returns each round trip's time in microseconds, and
/// the relay process's on-CPU time per round trip in `relayCpuMicros`.
std::vector<double> benchRelay(const StepSizes& sizes, int rounds, double& relayCpuMicros) {
  int a2r[2], r2a[2], r2c[2], c2r[2];
  if (::pipe(a2r) || ::pipe(r2a) || ::pipe(r2c) || ::pipe(c2r))
    std::exit(1);
  // Buffers before fork(): the bench has threads, so a child may only call
  // async-signal-safe functions (read, write, close, _exit).
  std::vector<char> request(sizes.request, 'q'), advice(sizes.advice, 'a'),
      observation(sizes.observation, 'o'), reply(sizes.reply, 'r');
  const int all[] = {a2r[0], a2r[1], r2a[0], r2a[1], r2c[0], r2c[1], c2r[0], c2r[1]};
  auto child = [&](std::initializer_list<int> keep, auto body) {
    pid_t pid = ::fork();
    if (pid == 0) {
      for (int fd : all)
        if (std::find(keep.begin(), keep.end(), fd) == keep.end())
          ::close(fd);
      body();
      ::_exit(0);
    }
    return pid;
  };
  pid_t compiler = child({r2c[0], c2r[1]}, [&] {
    while (readExact(r2c[0], advice.data(), advice.size()) &&
           writeAll(c2r[1], observation.data(), observation.size())) {
    }
  });
  pid_t relay = child({a2r[0], r2a[1], r2c[1], c2r[0]}, [&] {
    while (readExact(a2r[0], request.data(), request.size()) &&
           writeAll(r2c[1], advice.data(), advice.size()) &&
           readExact(c2r[0], observation.data(), observation.size()) &&
           writeAll(r2a[1], reply.data(), reply.size())) {
    }
  });
  for (int fd : {a2r[0], r2a[1], r2c[0], r2c[1], c2r[0], c2r[1]})
    ::close(fd);
  std::vector<double> micros;
  double relayCpuBefore = cpuNanos(relay);
  for (int i = 0; i < rounds; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!writeAll(a2r[1], request.data(), request.size()) ||
        !readExact(r2a[0], reply.data(), reply.size()))
      break;
    micros.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6);
  }
  relayCpuMicros = (cpuNanos(relay) - relayCpuBefore) / 1e3 / std::max<double>(1, micros.size());
  ::close(a2r[1]);
  ::close(r2a[0]);
  ::waitpid(relay, nullptr, 0);
  ::waitpid(compiler, nullptr, 0);
  return micros;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

/// Extra words before the server's command line, from MLGO_BENCH_LAUNCHER
/// (e.g. "valgrind --tool=callgrind --callgrind-out-file=/tmp/srv.%p"): how
/// the server's instructions per step are counted.
std::vector<std::string> launcherFromEnvironment() {
  std::vector<std::string> words;
  if (const char* text = std::getenv("MLGO_BENCH_LAUNCHER")) {
    std::istringstream in(text);
    for (std::string w; in >> w;)
      words.push_back(w);
  }
  return words;
}

std::string call(testing::LineClient& client, const std::string& method,
                 const std::string& params) {
  return client.call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method +
                     "\",\"params\":" + params + "}");
}

/// The observation encoding the server's clients ask for: binary, as the
/// Python package does, or MLGO_BENCH_ENCODING (json, base64).
std::string benchEncoding() {
  const char* chosen = std::getenv("MLGO_BENCH_ENCODING");
  return chosen && *chosen ? chosen : "binary";
}

/// Reads the frame after a reply line whose observation is binary (and its
/// closing newline); the frame's bytes.
std::string readFrame(testing::LineClient& client, const llvm::json::Object& result) {
  const auto* observation = result.getObject("observation");
  auto size = observation ? observation->getInteger("$frame") : std::nullopt;
  if (!size)
    return {};
  auto frame = client.readBytes(static_cast<size_t>(*size) + 1);
  if (!frame || frame->back() != '\n') {
    std::fprintf(stderr, "bench: a binary observation's frame did not arrive whole\n");
    std::exit(1);
  }
  frame->pop_back();
  return *frame;
}

/// The next action: the default's decision (both problems report one), else
/// the first valid eviction (from a base64 observation).
std::string chooseAction(const llvm::json::Object& result) {
  if (auto* info = result.getObject("info"))
    if (auto d = info->getInteger("default_action"))
      return std::to_string(*d);
  auto* obs = result.getObject("observation");
  auto mask = protocol::decodeBase64(obs->getString("mask")->str());
  if (protocol::loadElement<int64_t>(mask->data(), 32) == 1)
    return "32";
  for (size_t i = 0; i < 33; ++i)
    if (protocol::loadElement<int64_t>(mask->data(), i) == 1)
      return std::to_string(i);
  return "32";
}

/// The same episodes through env::Environment in-process (no server): what
/// the compiler round trip and the environment cost without the socket.
void benchInProcess(const Setup& setup, const testing::FakeCorpus& fake, int episodes) {
  env::EnvironmentOptions options;
  options.problem = setup.problem;
  options.corpus = fake.corpus;
  options.clang = fake.clangWrapper;
  options.useDiskCache = false;
  options.fullCompile = true; // The fake compiler replays; it has no IR to optimise.
  options.jobs = 2;
  auto environment = env::Environment::create(options);
  if (!environment) {
    std::fprintf(stderr, "bench: %s\n", environment.error().message().c_str());
    std::exit(1);
  }
  const auto& d = (*environment)->describe();
  std::optional<size_t> mask;
  for (size_t i = 0; i < d.observationSpecs.size(); ++i)
    if (d.observationSpecs[i].name() == "mask")
      mask = d.observationOffsets[i];
  std::vector<double> perStep;
  for (int e = 0; e < episodes; ++e) {
    env::ResetRequest request;
    request.module = "replay";
    auto reset = (*environment)->reset(request);
    if (!reset) {
      std::fprintf(stderr, "bench: %s\n", reset.error().message().c_str());
      std::exit(1);
    }
    env::StepResult step = std::move(reset->step);
    uint64_t steps = 0;
    auto start = std::chrono::steady_clock::now();
    while (!step.terminated && !step.truncated) {
      env::ActionValue action = int64_t{32};
      if (step.defaultAction)
        action = *step.defaultAction;
      else if (mask &&
               protocol::loadElement<int64_t>(step.observation.bytes.data() + *mask, 32) != 1)
        action = *step.fallbackAction;
      auto status = (*environment)->step(reset->episode, action, step);
      if (!status.ok()) {
        std::fprintf(stderr, "bench: %s\n", status.error().message().c_str());
        std::exit(1);
      }
      ++steps;
    }
    perStep.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        static_cast<double>(steps) * 1e6);
  }
  std::sort(perStep.begin(), perStep.end());
  std::printf("%s: in-process env.step (no server): median %.1f us per step\n",
              setup.problem.c_str(), perStep[perStep.size() / 2]);
}

void benchProblem(const Setup& setup, int episodes) {
  testing::FakeCorpus fake = recordCorpus(setup);
  benchInProcess(setup, fake, episodes);
  testing::ServerProcess server({"--problem=" + setup.problem, "--corpus=" + fake.corpus.string(),
                                 "--clang=" + fake.clangWrapper.string(), "--no-disk-cache",
                                 "--full-compile", "--jobs=2"},
                                {}, launcherFromEnvironment());
  if (!server.running()) {
    std::fprintf(stderr, "bench: server failed: %s\n", server.log().c_str());
    std::exit(1);
  }
  auto client = server.connect();
  double serverCpuBefore = cpuNanos(server.pid());
  std::vector<double> perStep, roundTrips;
  StepSizes sizes;
  sizes.observation = fake.streamBytes / std::max(1, fake.observations);
  uint64_t totalSteps = 0;
  double totalSeconds = 0;
  double intermediateNanos = 0; // Server CPU from the first step sent to the last intermediate reply.
  for (int e = 0; e < episodes; ++e) {
    auto reply = llvm::json::parse(
        call(client, "reset", R"({"module":"replay","encoding":")" + benchEncoding() + "\"}"));
    auto* result = reply->getAsObject()->getObject("result");
    if (!result) {
      std::fprintf(stderr, "bench: reset failed\n");
      std::exit(1);
    }
    (void)readFrame(client, *result);
    std::string episode = std::to_string(*result->getInteger("episode"));
    std::string action = chooseAction(*result);
    uint64_t steps = 0;
    auto start = std::chrono::steady_clock::now();
    double cpuAtFirstStep = cpuNanos(server.pid()), cpuAtLastReply = cpuAtFirstStep;
    for (;;) {
      std::string params = "{\"episode\":" + episode + ",\"action\":" + action + "}";
      auto sent = std::chrono::steady_clock::now();
      auto text = call(client, "step", params);
      double micros =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count() * 1e6;
      ++steps;
      auto step = llvm::json::parse(text);
      auto* r = step->getAsObject()->getObject("result");
      if (!r) {
        std::fprintf(stderr, "bench: step failed: %s\n", text.substr(0, 300).c_str());
        std::exit(1);
      }
      if (*r->getBoolean("terminated") || *r->getBoolean("truncated"))
        break;
      std::string frame = readFrame(client, *r);
      cpuAtLastReply = cpuNanos(server.pid());
      roundTrips.push_back(micros); // Not the final step: the compile's end and scoring.
      sizes.request = params.size() + 50;
      sizes.reply = text.size() + 1 + (frame.empty() ? 0 : frame.size() + 1);
      action = chooseAction(*r);
    }
    // The final step includes the end of the compile and the scoring: leave
    // it out of the per-step figure by timing up to it separately.
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totalSteps += steps;
    totalSeconds += seconds;
    intermediateNanos += cpuAtLastReply - cpuAtFirstStep;
    perStep.push_back(seconds / static_cast<double>(steps) * 1e6);
  }
  double serverCpu = (cpuNanos(server.pid()) - serverCpuBefore) / 1e9;
  double intermediateMicros = intermediateNanos / 1e3 / static_cast<double>(roundTrips.size());
  std::sort(perStep.begin(), perStep.end());
  std::printf("%s: server process CPU time (its own, without the compiler): %.1f us per step "
              "(resets included)\n",
              setup.problem.c_str(), serverCpu / static_cast<double>(totalSteps) * 1e6);
  std::printf("%s: server CPU per intermediate step (all its threads, schedstat; the steps "
              "before an episode's last, whose reply needs no compile end nor scoring): %.1f us "
              "over %zu steps, %s observations (target <= 30 us)\n",
              setup.problem.c_str(), intermediateMicros, roundTrips.size(),
              benchEncoding().c_str());
  std::printf("%s: C++ client over a Unix socket: %d episodes, %llu steps, median %.1f us per "
              "step round trip (min %.1f, max %.1f), %.0f steps/s overall (final steps, which "
              "wait for the compile to end and be scored, included)\n",
              setup.problem.c_str(), episodes, static_cast<unsigned long long>(totalSteps),
              perStep[perStep.size() / 2], perStep.front(), perStep.back(),
              static_cast<double>(totalSteps) / totalSeconds);
  double relayCpu = 0;
  auto relay =
      benchRelay(sizes, static_cast<int>(std::max<size_t>(roundTrips.size(), 2000)), relayCpu);
  std::printf("%s: the relay process's CPU per round trip, the floor for a host's: %.1f us; "
              "server/relay CPU %.2fx\n",
              setup.problem.c_str(), relayCpu,
              intermediateMicros / relayCpu);
  double serverTrip = median(roundTrips), relayTrip = median(relay);
  std::printf("%s: step round trip (intermediate steps, no parsing timed): server median %.1f us "
              "over %zu; three-process pipe relay (request %zu B, advice %zu B, observation %zu "
              "B, reply %zu B) median %.1f us over %zu; server/relay %.2fx (target <= 2x)\n",
              setup.problem.c_str(), serverTrip, roundTrips.size(), sizes.request, sizes.advice,
              sizes.observation, sizes.reply, relayTrip, relay.size(), serverTrip / relayTrip);
  // Debian's interpreter, which has numpy (docs/python.md); a PATH python3 may not.
  std::string command = std::string("/usr/bin/python3 ") + MLGO_SOURCE_DIR +
                        "/bench/server_client.py --connect unix:" + server.socketPath() +
                        " --episodes " + std::to_string(std::max(3, episodes / 2));
  std::fflush(stdout);
  if (std::getenv("MLGO_BENCH_LAUNCHER") != nullptr)
    std::printf("%s: Python client skipped (the server runs under MLGO_BENCH_LAUNCHER)\n",
                setup.problem.c_str());
  else if (std::system(command.c_str()) != 0)
    std::fprintf(stderr, "bench: the Python client run failed\n");
  client.close();
  server.stop();
  fs::remove_all(fake.dir);
}

} // namespace

int main(int argc, char** argv) {
  int episodes = argc > 1 ? std::atoi(argv[1]) : 20;
  benchProblem({"inlining", "sparse_matrix.o", "Oz"}, episodes);
  benchProblem({"regalloc", "stencil_kernels.o", "O2"}, episodes);
  return 0;
}
