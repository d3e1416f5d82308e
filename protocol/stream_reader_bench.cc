//===- protocol/stream_reader_bench.cc - reader throughput ----------------===//
///
/// Parse throughput of a regalloc-shaped stream (21 tensors, 3436 bytes per
/// observation), fed through prepare()/commit() in chunks of the given size,
/// as a pipe reader would. Reports bytes/s; the target is >= 1 GB/s.
///
//===----------------------------------------------------------------------===//
#include "support/synthetic_log.h"

#include "mlgo/protocol/stream_reader.h"

#include <benchmark/benchmark.h>

#include <cstring>

namespace {

const std::string& regallocStream() {
  static const std::string stream =
      mlgo::testing::syntheticStream(mlgo::testing::regallocHeader(), 64, 200, 3);
  return stream;
}

void BM_ParseRegallocStream(benchmark::State& state) {
  const std::string& stream = regallocStream();
  const size_t chunk = static_cast<size_t>(state.range(0));
  int64_t observations = 0;
  for (auto _ : state) {
    mlgo::protocol::StreamReader reader;
    mlgo::protocol::LogEvent event;
    size_t at = 0;
    while (true) {
      if (at < stream.size()) {
        size_t n = std::min(chunk, stream.size() - at);
        auto space = reader.prepare(n);
        std::memcpy(space.data(), stream.data() + at, n);
        reader.commit(n);
        at += n;
      } else {
        reader.finish();
      }
      auto status = reader.next(event);
      while (status.ok() && *status == mlgo::protocol::ReadStatus::kEvent) {
        if (event.kind == mlgo::protocol::EventKind::kObservation) {
          ++observations;
          benchmark::DoNotOptimize(event.tensors.data());
        }
        status = reader.next(event);
      }
      if (!status.ok()) {
        state.SkipWithError(status.error().message().c_str());
        return;
      }
      if (*status == mlgo::protocol::ReadStatus::kEnd)
        break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.counters["observations/s"] =
      benchmark::Counter(static_cast<double>(observations), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseRegallocStream)->Arg(4096)->Arg(65536)->Arg(1 << 20);

} // namespace

BENCHMARK_MAIN();
