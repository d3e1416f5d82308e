//===- launch/stale_entry.cc - a changed module's unchanged call sites ------===//
#include "stale_entry.h"

#include <string>

namespace mlgo::launch {
namespace {

Error badIndex(const std::string& where, std::string_view what) {
  return makeError(ErrorCode::kInvalidArgument, "tuning file '{}': {}", where, what);
}

std::string_view fileName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string objectPathOf(std::string_view output, std::string_view source) {
  if (source.ends_with(".o")) // a ThinLTO backend: the module's own object
    return std::string(source);
  if (!output.empty())
    return std::string(output);
  std::string_view name = fileName(source);
  return std::string(name.substr(0, name.rfind('.'))) + ".o";
}

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
  auto rows = table::readIndex(table.dir());
  if (!rows.ok())
    return rows.error();
  if (rows->empty())
    return StaleLookup{std::nullopt, "the table has no site keys (tune again to record them)"};
  std::vector<const table::IndexRow*> named;
  std::vector<std::string_view> names;
  for (const table::IndexRow& row : *rows)
    if (row.opt == optLevel && fileName(row.module) == fileName(objectPath)) {
      named.push_back(&row);
      names.push_back(row.module);
    }
  if (named.empty())
    return StaleLookup{std::nullopt, fmt::format("no module tuned at {} is named like '{}'",
                                                 optLevel, objectPath)};
  std::vector<size_t> closest = table::closestModules(names, objectPath);
  if (closest.size() != 1)
    return StaleLookup{std::nullopt,
                       fmt::format("{} modules tuned at {} are named like '{}' and the path "
                                   "does not tell them apart",
                                   closest.size(), optLevel, objectPath)};
  const table::IndexRow& row = *named[closest.front()];
  auto entries = table.lookup(row.first);
  if (!entries.ok())
    return entries.error();
  for (TuningEntry& e : *entries) {
    if (e.module != row.module || e.opt != row.opt)
      continue;
    if (e.sites.empty())
      return StaleLookup{std::nullopt, "module '" + e.module + "' has no site keys"};
    if (e.profile != profile)
      return StaleLookup{std::nullopt,
                         "module '" + e.module + "' was tuned with another profile"};
    return StaleLookup{std::move(e), ""};
  }
  return badIndex((table.dir() / table::kIndexFile).string(),
                  fmt::format("lists module '{}', whose entry is not in the table", row.module));
}

} // namespace mlgo::launch
