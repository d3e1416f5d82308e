//===- launch/indexed_entry.cc - a module's entry by its object's name ------===//
#include "indexed_entry.h"

#include <string>
#include <vector>

namespace mlgo::launch {
namespace {

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

Result<IndexLookup> findIndexedEntry(const TuningTable& table, std::string_view objectPath,
                                     std::string_view optLevel, std::string_view profile) {
  auto rows = table::readIndex(table.dir());
  if (!rows.ok())
    return rows.error();
  if (rows->empty())
    return IndexLookup{std::nullopt, "the table has no module index", false};
  std::vector<const table::IndexRow*> named;
  std::vector<std::string_view> names;
  for (const table::IndexRow& row : *rows)
    if (row.opt == optLevel && fileName(row.module) == fileName(objectPath)) {
      named.push_back(&row);
      names.push_back(row.module);
    }
  if (named.empty())
    return IndexLookup{std::nullopt, fmt::format("no module tuned at {} is named like '{}'",
                                                 optLevel, objectPath)};
  std::vector<size_t> closest = table::closestModules(names, objectPath);
  if (closest.size() != 1)
    return IndexLookup{std::nullopt,
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
    if (e.profile != profile)
      return IndexLookup{std::nullopt, "module '" + e.module + "' was tuned with another profile"};
    return IndexLookup{std::move(e), ""};
  }
  return makeError(ErrorCode::kInvalidArgument,
                   "tuning file '{}': lists module '{}', whose entry is not in the table",
                   (table.dir() / table::kIndexFile).string(), row.module);
}

} // namespace mlgo::launch
