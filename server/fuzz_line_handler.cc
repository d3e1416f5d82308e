//===- server/fuzz_line_handler.cc - libFuzzer target for whole lines -----===//
///
/// Feeds arbitrary bytes to the server's line handler (decode + dispatch,
/// line_handler.h) on an Environment built on the in-process fake compiler
/// driver: describe, reset, step and close really run, episodes really open
/// and fail. The input is split into lines, handled in order on one
/// connection; in a line the word EPISODE stands for the id of the
/// connection's latest episode, so inputs can step what they reset. Must
/// never crash, hang or leak; every reply must be valid JSON; the
/// connection's episodes are closed after each input.
///
//===----------------------------------------------------------------------===//
#include "mlgo/server/line_handler.h"

#include "fake_driver.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

using namespace mlgo;

struct Harness {
  std::unique_ptr<env::testing::FakeEnvironment> fake;
  std::unique_ptr<server::Dispatcher> dispatcher;
};

Harness* built = nullptr;

/// Built once: creating an Environment per input would dwarf the work.
/// Destroyed at exit, so its directory goes too.
Harness& harness() {
  if (built != nullptr)
    return *built;
  built = [] {
    env::testing::FakeEnvironmentSetup setup;
    setup.modules = {"alpha", "beta", "gamma"};
    env::testing::FakeModule broken;
    broken.stream = *env::testing::loadRecordedStream("inlining.stream");
    broken.fault = env::testing::FakeFault::kTruncate;
    broken.faultAfter = 2;
    setup.driver.modules["gamma"] = broken;
    setup.options.maxEpisodes = 64;
    setup.options.compileTimeout = std::chrono::seconds(5);
    auto created = env::testing::FakeEnvironment::create(std::move(setup));
    if (!created.ok()) {
      std::fprintf(stderr, "fuzz_line_handler: %s\n", created.error().message().c_str());
      std::abort();
    }
    auto* out = new Harness;
    out->fake = std::move(*created);
    server::DispatcherOptions options;
    options.maxEpisodesPerConnection = 16;
    out->dispatcher = std::make_unique<server::Dispatcher>(out->fake->environment(), options);
    return out;
  }();
  std::atexit([] {
    delete built;
    built = nullptr;
  });
  return *built;
}

/// The episode id a reset reply names, if any.
std::optional<std::string> episodeOf(const std::string& reply) {
  static constexpr std::string_view kKey = "\"episode\":";
  size_t at = reply.find(kKey);
  if (at == std::string::npos)
    return std::nullopt;
  size_t begin = at + kKey.size();
  size_t end = reply.find_first_not_of("0123456789", begin);
  if (end == begin)
    return std::nullopt;
  return reply.substr(begin, end - begin);
}

/// The bytes a reply's binary observations announce (their `$frame`s).
int64_t framedBytes(const llvm::json::Value& reply) {
  if (const auto* items = reply.getAsArray()) {
    int64_t sum = 0;
    for (const auto& item : *items)
      sum += framedBytes(item);
    return sum;
  }
  const auto* object = reply.getAsObject();
  const auto* result = object ? object->getObject("result") : nullptr;
  const auto* observation = result ? result->getObject("observation") : nullptr;
  auto size = observation ? observation->getInteger("$frame") : std::nullopt;
  return size.value_or(0);
}

std::string substitute(std::string_view line, const std::string& episode) {
  std::string out(line);
  for (size_t at = out.find("EPISODE"); at != std::string::npos; at = out.find("EPISODE", at))
    out.replace(at, 7, episode);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness& h = harness();
  server::ConnectionEpisodes episodes;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string episode = "0";
  for (int lines = 0; !input.empty() && lines < 64; ++lines) {
    size_t newline = input.find('\n');
    std::string line = substitute(input.substr(0, newline), episode);
    input.remove_prefix(newline == std::string_view::npos ? input.size() : newline + 1);
    auto reply = server::handleLine(line, *h.dispatcher, episodes, 16);
    if (!reply)
      continue;
    // The reply line, then (binary observations) a newline and their frames.
    size_t end = reply->find('\n');
    auto parsed = llvm::json::parse(std::string_view(*reply).substr(0, end));
    if (!parsed)
      std::abort();
    size_t frames = end == std::string::npos ? 0 : reply->size() - end - 1;
    if (static_cast<int64_t>(frames) != framedBytes(*parsed))
      std::abort();
    if (auto id = episodeOf(reply->substr(0, end)))
      episode = *id;
  }
  h.dispatcher->closeAll(episodes);
  if (h.fake->environment().openEpisodes() != 0)
    std::abort(); // Every episode of a connection goes with it.
  return 0;
}
