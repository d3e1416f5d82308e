//===- table/entry_choice.cc - the entry an object path means ---------------===//
#include "mlgo/table/tuning_table.h"

#include <algorithm>

namespace mlgo::table {
namespace {

/// How many trailing '/'-separated components `a` and `b` have in common.
size_t sharedTail(std::string_view a, std::string_view b) {
  size_t count = 0;
  while (!a.empty() && !b.empty()) {
    std::string_view x = a.substr(a.rfind('/') == std::string_view::npos ? 0 : a.rfind('/') + 1);
    std::string_view y = b.substr(b.rfind('/') == std::string_view::npos ? 0 : b.rfind('/') + 1);
    if (x != y)
      break;
    ++count;
    a.remove_suffix(std::min(a.size(), x.size() + 1));
    b.remove_suffix(std::min(b.size(), y.size() + 1));
  }
  return count;
}

size_t components(std::string_view path) {
  return static_cast<size_t>(std::count(path.begin(), path.end(), '/')) + 1;
}

} // namespace

std::vector<size_t> closestModules(std::span<const std::string_view> names,
                                   std::string_view objectPath) {
  std::vector<size_t> shared;
  for (std::string_view name : names)
    shared.push_back(sharedTail(name, objectPath));
  size_t most = shared.empty() ? 0 : *std::max_element(shared.begin(), shared.end());
  std::vector<size_t> best, whole;
  for (size_t i = 0; i < names.size(); ++i) {
    if (shared[i] != most)
      continue;
    best.push_back(i);
    if (most > 0 && components(names[i]) == most)
      whole.push_back(i);
  }
  return whole.empty() ? best : whole;
}

std::optional<TuningEntry> chooseEntry(std::vector<TuningEntry> entries,
                                       std::string_view objectPath) {
  if (entries.size() <= 1)
    return entries.empty() ? std::nullopt : std::optional<TuningEntry>(std::move(entries[0]));
  std::vector<std::string_view> names;
  for (const auto& e : entries)
    names.push_back(e.module);
  std::vector<size_t> left = closestModules(names, objectPath);
  for (size_t i : left)
    if (entries[i].actions != entries[left.front()].actions ||
        entries[i].stream != entries[left.front()].stream)
      return std::nullopt;
  return std::move(entries[left.front()]);
}

} // namespace mlgo::table
