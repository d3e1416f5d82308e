//===- launch/stale_entry.cc - a changed module's unchanged call sites ------===//
#include "stale_entry.h"

#include <string>

namespace mlgo::launch {

StaleAnswers::StaleAnswers(TuningEntry entry) : entry_(std::move(entry)) {
  for (size_t i = 0; i < entry_.sites.size(); ++i)
    recorded_[entry_.sites[i]].push_back(static_cast<uint32_t>(i));
}

void StaleAnswers::skip(size_t steps) {
  for (size_t i = 0; i < steps && i < entry_.sites.size(); ++i)
    ++asked_[entry_.sites[i]];
  decisions_ += steps;
  fromEntry_ += steps;
}

std::optional<uint8_t> StaleAnswers::next(uint64_t key) {
  ++decisions_;
  auto found = recorded_.find(key);
  uint32_t occurrence = asked_[key]++;
  if (found == recorded_.end() || occurrence >= found->second.size())
    return std::nullopt;
  ++fromEntry_;
  return entry_.actions[found->second[occurrence]];
}

Result<StaleLookup> findStaleEntry(const TuningTable& table, std::string_view objectPath,
                                   std::string_view optLevel, std::string_view profile) {
  auto found = findIndexedEntry(table, objectPath, optLevel, profile);
  if (!found.ok())
    return found.error();
  if (!found->indexed)
    return StaleLookup{std::nullopt, "the table has no site keys (tune again to record them)"};
  if (found->entry && found->entry->sites.empty())
    return StaleLookup{std::nullopt, "module '" + found->entry->module + "' has no site keys"};
  return std::move(*found);
}

} // namespace mlgo::launch
