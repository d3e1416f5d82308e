//===- protocol/fuzz_stream_reader.cc - libFuzzer target for the reader ---===//
///
/// The first input byte picks a chunk size; the rest is the stream. The
/// reader must never crash, hang or leak. When the stream parses cleanly, its
/// events are rewritten with StreamWriter and read again: the second reading
/// must give the same events (offsets aside, as the writer normalises JSON
/// spacing).
///
//===----------------------------------------------------------------------===//
#include "support/log_events.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  size_t chunk = data[0] % 64 + 1;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  auto first = mlgo::testing::readInChunks(stream, [&] { return chunk; });
  if (first.error || first.events.empty())
    return 0;
  auto rewritten = mlgo::testing::rewrite(first.header, first.events);
  if (!rewritten.ok())
    std::abort(); // Events the reader accepted must be writable.
  auto second = mlgo::testing::readWhole(*rewritten);
  if (second.error || second.events.size() != first.events.size())
    std::abort();
  for (size_t i = 0; i < first.events.size(); ++i) {
    auto a = first.events[i], b = second.events[i];
    a.offset = b.offset = 0;
    if (!(a == b))
      std::abort();
  }
  return 0;
}
