//===- table/fuzz_tuning_table.cc - libFuzzer target for the table reader -===//
///
/// The first input byte picks the file kind (even: an entries file filed
/// under the key 0123456789abcdef, odd: a manifest); the rest is the file's
/// text. The reader must never crash, hang or leak, and what it
/// accepts must hold together: every entry's action count is what it said
/// (its "decisions", read here from the same text), its digests are 64 hex
/// digits filed under the key; a manifest's features are sorted and
/// distinct. And the writer must write every accepted entry (unless a score
/// is not finite, which it refuses) as text the reader reads back as the
/// same entry. Any accepted input that breaks one of these aborts.
///
//===----------------------------------------------------------------------===//
#include "mlgo/table/table_writer.h"
#include "mlgo/table/tuning_table.h"

#include <llvm/Support/JSON.h>

#include <cmath>
#include <cstdlib>

namespace {

bool isHexDigest(const std::string& text) {
  if (text.size() != 64)
    return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

void checkManifest(std::string_view text) {
  auto manifest = mlgo::table::parseManifest(text, "fuzz");
  if (!manifest.ok())
    return;
  for (size_t i = 1; i < manifest->features.size(); ++i)
    if (!(manifest->features[i - 1] < manifest->features[i]))
      std::abort();
}

/// The "decisions" and "module" of the i-th entry of `text`, which the reader
/// accepted (so it is JSON with an "entries" list of objects).
void checkAgainstText(std::string_view text, const std::vector<mlgo::table::TuningEntry>& read) {
  auto value = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    std::abort();
  const auto* list = value->getAsObject() ? value->getAsObject()->getArray("entries") : nullptr;
  if (!list || list->size() != read.size())
    std::abort();
  for (size_t i = 0; i < read.size(); ++i) {
    const auto* o = (*list)[i].getAsObject();
    auto decisions = o ? o->getInteger("decisions") : std::nullopt;
    auto module = o ? o->getString("module") : std::nullopt;
    if (!decisions || !module || *decisions < 0 ||
        static_cast<uint64_t>(*decisions) != read[i].actions.size() ||
        module->str() != read[i].module)
      std::abort();
  }
}

/// The writer writes `e` as text the reader reads back as `e`.
void checkRoundTrip(const mlgo::table::TuningEntry& e) {
  auto text = mlgo::table::entryText(e);
  if (!text.ok()) {
    if (std::isfinite(e.defaultScore) && std::isfinite(e.tunedScore))
      std::abort();
    return;
  }
  auto back = mlgo::table::parseEntry(*text, "fuzz");
  if (!back.ok() || !(*back == e))
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 1) {
    checkManifest(text);
    return 0;
  }
  constexpr std::string_view kKey = "0123456789abcdef";
  auto entries = mlgo::table::parseEntries(text, kKey, "fuzz");
  if (!entries.ok())
    return 0;
  for (const auto& e : *entries)
    if (!isHexDigest(e.first) || !isHexDigest(e.stream) || !e.first.starts_with(kKey))
      std::abort();
  checkAgainstText(text, *entries);
  for (const auto& e : *entries)
    checkRoundTrip(e);
  return 0;
}
