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
///  4. runs scripts/bench_server_client.py for the Python client's steps/s.
///
/// Usage: bench_server_step [episodes=20]. Target: <= 20 us per step.
///
//===----------------------------------------------------------------------===//
#include "support/fifo_host.h"
#include "support/server_process.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/env/environment.h"
#include "mlgo/env/problem.h"
#include "mlgo/protocol/advice.h"
#include "mlgo/protocol/observation_codec.h"

#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cstdio>
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

void writeFile(const fs::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// Records clang's stream for one module, answering its defaults (inlining)
/// or "evict nothing / first valid" (eviction). Returns the corpus dir.
fs::path recordCorpus(const Setup& setup, const fs::path& dir) {
  auto demo = corpus::defaultDemoCorpusDir(setup.variant);
  auto corpus = corpus::Corpus::open(*demo);
  if (!corpus) {
    std::fprintf(stderr, "bench: %s\n", corpus.error().message().c_str());
    std::exit(1);
  }
  const auto* module = *corpus->find(setup.module);
  const auto* problem = *env::findProblem(setup.problem);
  fs::create_directories(dir / "corpus");
  auto args = *corpus::recompileArgs(*module, dir / "corpus" / "replay.o");
  std::vector<std::string> argv = {MLGO_CLANG};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string base = (dir / "ch").string();
  for (auto& a : problem->interactiveArgs(base, env::ProblemOptions()))
    argv.push_back(a);
  for (auto& a : problem->scoreArgs(dir / "corpus" / "replay.remarks", true))
    argv.push_back(a);
  auto capture = testing::runInteractive(
      argv, base, [&](const protocol::LogHeader& header, const protocol::LogEvent& event) {
        int64_t choice = 0;
        if (auto d = header.featureIndex("inlining_default"))
          choice = protocol::loadElement<int64_t>(event.tensors[*d].data(), 0);
        if (auto m = header.featureIndex("mask")) {
          choice = -1;
          for (int64_t i = 32; i >= 0 && choice < 0; i = (i == 32 ? 0 : i + 1))
            if (protocol::loadElement<int64_t>(event.tensors[*m].data(), i) == 1)
              choice = i;
        }
        return *protocol::encodeScalarAdvice(*header.advice, choice);
      });
  if (!capture.error.empty() || capture.exitCode != 0) {
    std::fprintf(stderr, "bench: recording failed: %s\n", capture.error.c_str());
    std::exit(1);
  }
  writeFile(dir / "corpus" / "replay.stream", capture.stream);
  std::string script = "mlgo-fake-compiler\nstream replay.stream\nobject replay.o\n";
  if (fs::exists(dir / "corpus" / "replay.remarks"))
    script += "remarks replay.remarks\n";
  writeFile(dir / "corpus" / "replay.bc", script);
  writeFile(dir / "corpus" / "replay.cmd", std::string("-cc1\0-O2\0", 9));
  writeFile(dir / "corpus" / "corpus_description.json",
            R"({"modules":["replay"],"has_thinlto":false})");
  // The wrapper: fake-compiler scripts go to the fake, the rest to clang.
  writeFile(dir / "clang-wrapper",
            std::string("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.bc) "
                        "if head -c 18 \"$a\" | grep -q mlgo-fake-compiler; then exec ") +
                MLGO_FAKE_COMPILER + " \"$@\"; fi;; esac; done\nexec " + MLGO_CLANG +
                " \"$@\"\n");
  fs::permissions(dir / "clang-wrapper", fs::perms::owner_all);
  std::printf("%s: recorded %d observations of %s (%zu bytes)\n", setup.problem.c_str(),
              capture.answers, setup.module.c_str(), capture.stream.size());
  return dir / "corpus";
}

/// CPU seconds (user + system) a process has used so far.
double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto fields = text.substr(text.rfind(')') + 2);
  std::istringstream words(fields);
  std::string skip;
  for (int i = 0; i < 11; ++i) // fields 3..13
    words >> skip;
  double utime = 0, stime = 0;
  words >> utime >> stime;
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string call(testing::LineClient& client, const std::string& method,
                 const std::string& params) {
  return client.call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method +
                     "\",\"params\":" + params + "}");
}

/// The next action: clang's default for inlining, the first valid eviction.
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
void benchInProcess(const Setup& setup, const fs::path& dir, int episodes) {
  env::EnvironmentOptions options;
  options.problem = setup.problem;
  options.corpus = dir / "corpus";
  options.clang = dir / "clang-wrapper";
  options.useDiskCache = false;
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
      else if (mask && protocol::loadElement<int64_t>(step.observation.bytes.data() + *mask, 32) != 1)
        action = *step.fallbackAction;
      auto status = (*environment)->step(reset->episode, action, step);
      if (!status.ok()) {
        std::fprintf(stderr, "bench: %s\n", status.error().message().c_str());
        std::exit(1);
      }
      ++steps;
    }
    perStep.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                      static_cast<double>(steps) * 1e6);
  }
  std::sort(perStep.begin(), perStep.end());
  std::printf("%s: in-process env.step (no server): median %.1f us per step\n",
              setup.problem.c_str(), perStep[perStep.size() / 2]);
}

void benchProblem(const Setup& setup, int episodes) {
  std::string tmpl = (fs::temp_directory_path() / "mlgo-bench-XXXXXX").string();
  fs::path dir = ::mkdtemp(tmpl.data());
  fs::path corpusDir = recordCorpus(setup, dir);
  benchInProcess(setup, dir, episodes);
  testing::ServerProcess server({"--problem=" + setup.problem, "--corpus=" + corpusDir.string(),
                                 "--clang=" + (dir / "clang-wrapper").string(), "--no-disk-cache",
                                 "--jobs=2"});
  if (!server.running()) {
    std::fprintf(stderr, "bench: server failed: %s\n", server.log().c_str());
    std::exit(1);
  }
  auto client = server.connect();
  double serverCpuBefore = cpuSeconds(server.pid());
  std::vector<double> perStep;
  uint64_t totalSteps = 0;
  double totalSeconds = 0;
  for (int e = 0; e < episodes; ++e) {
    auto reply = llvm::json::parse(
        call(client, "reset", R"({"module":"replay","encoding":"base64"})"));
    auto* result = reply->getAsObject()->getObject("result");
    if (!result) {
      std::fprintf(stderr, "bench: reset failed\n");
      std::exit(1);
    }
    std::string episode = std::to_string(*result->getInteger("episode"));
    std::string action = chooseAction(*result);
    uint64_t steps = 0;
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      auto text = call(client, "step", "{\"episode\":" + episode + ",\"action\":" + action + "}");
      ++steps;
      auto step = llvm::json::parse(text);
      auto* r = step->getAsObject()->getObject("result");
      if (!r) {
        std::fprintf(stderr, "bench: step failed: %s\n", text.substr(0, 300).c_str());
        std::exit(1);
      }
      if (*r->getBoolean("terminated") || *r->getBoolean("truncated"))
        break;
      action = chooseAction(*r);
    }
    // The final step includes the end of the compile and the scoring: leave
    // it out of the per-step figure by timing up to it separately.
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totalSteps += steps;
    totalSeconds += seconds;
    perStep.push_back(seconds / static_cast<double>(steps) * 1e6);
  }
  double serverCpu = cpuSeconds(server.pid()) - serverCpuBefore;
  std::sort(perStep.begin(), perStep.end());
  std::printf("%s: server process CPU time (its own, without the compiler): %.1f us per step "
              "(resets included)\n",
              setup.problem.c_str(), serverCpu / static_cast<double>(totalSteps) * 1e6);
  std::printf("%s: C++ client over a Unix socket: %d episodes, %llu steps, median %.1f us per "
              "step round trip (min %.1f, max %.1f), %.0f steps/s overall (final steps, which "
              "wait for the compile to end and be scored, included)\n",
              setup.problem.c_str(), episodes, static_cast<unsigned long long>(totalSteps),
              perStep[perStep.size() / 2], perStep.front(), perStep.back(),
              static_cast<double>(totalSteps) / totalSeconds);
  std::string command = std::string("python3 ") + MLGO_SOURCE_DIR +
                        "/scripts/bench_server_client.py --connect unix:" + server.socketPath() +
                        " --episodes " + std::to_string(std::max(3, episodes / 2));
  std::fflush(stdout);
  if (std::system(command.c_str()) != 0)
    std::fprintf(stderr, "bench: the Python client run failed\n");
  client.close();
  server.stop();
  fs::remove_all(dir);
}

} // namespace

int main(int argc, char** argv) {
  int episodes = argc > 1 ? std::atoi(argv[1]) : 20;
  benchProblem({"inlining", "sparse_matrix.o", "Oz"}, episodes);
  benchProblem({"regalloc", "stencil_kernels.o", "O2"}, episodes);
  return 0;
}
