//===- launch/fuzz_tuning_table.cc - libFuzzer target for the table reader -===//
///
/// The first input byte picks the file kind (even: an entries file filed
/// under the key 0123456789abcdef, odd: a manifest); the rest is the file's
/// text. The reader must never crash, hang or leak, and what it
/// accepts must hold together: every entry's action count is what it said,
/// its digests are 64 hex digits filed under the key; a manifest's features
/// are sorted and distinct.
///
//===----------------------------------------------------------------------===//
#include "mlgo/launch/tuning_table.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 1) {
    auto manifest = mlgo::launch::parseManifest(text, "fuzz");
    if (manifest.ok())
      for (size_t i = 1; i < manifest->features.size(); ++i)
        if (!(manifest->features[i - 1] < manifest->features[i]))
          std::abort();
    return 0;
  }
  constexpr std::string_view kKey = "0123456789abcdef";
  auto entries = mlgo::launch::parseEntries(text, kKey, "fuzz");
  if (!entries.ok())
    return 0;
  for (const auto& e : *entries)
    if (e.first.size() != 64 || e.stream.size() != 64 || !e.first.starts_with(kKey))
      std::abort();
  return 0;
}
