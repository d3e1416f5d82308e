//===- trace/module_selection.cc - which modules a trace covers -------------===//
#include "mlgo/trace/module_selection.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>

namespace mlgo::trace {
namespace {

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace

uint64_t moduleRank(std::string_view name, uint64_t seed) {
  uint64_t hash = 0xcbf29ce484222325ULL ^ mix(seed + 0x9e3779b97f4a7c15ULL);
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return mix(hash);
}

Result<std::vector<size_t>> selectModules(const std::vector<std::string>& names,
                                          const std::vector<uint64_t>& sizes,
                                          const SelectionOptions& options) {
  if (!(options.samplingRate >= 0 && options.samplingRate <= 1))
    return makeError(ErrorCode::kInvalidArgument, "--sampling-rate must be in [0, 1], got {}",
                     options.samplingRate);
  if (options.shardCount == 0 || options.shardIndex >= options.shardCount)
    return makeError(ErrorCode::kInvalidArgument,
                     "--shard={}/{}: the shard index must be below the shard count",
                     options.shardIndex, options.shardCount);
  if (names.size() != sizes.size())
    return makeError(ErrorCode::kInternal, "selectModules: {} names but {} sizes", names.size(),
                     sizes.size());
  std::optional<std::regex> filter;
  if (!options.moduleFilter.empty()) {
    try {
      filter.emplace(options.moduleFilter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--module_filter '{}' is not a valid regular "
                       "expression: {}",
                       options.moduleFilter, e.what());
    }
  }
  struct Candidate {
    uint64_t rank;
    size_t index;
  };
  std::vector<Candidate> kept;
  try {
    for (size_t i = 0; i < names.size(); ++i) {
      if (filter && !std::regex_match(names[i], *filter))
        continue;
      kept.push_back({moduleRank(names[i], options.seed), i});
    }
  } catch (const std::regex_error& e) {
    return makeError(ErrorCode::kInvalidArgument, "--module_filter '{}' failed to match: {}",
                     options.moduleFilter, e.what());
  }
  size_t count = static_cast<size_t>(std::floor(options.samplingRate * double(kept.size())));
  if (count == 0 && options.samplingRate > 0 && !kept.empty())
    count = 1;
  auto byRank = [&](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank < b.rank : names[a.index] < names[b.index];
  };
  std::sort(kept.begin(), kept.end(), byRank);
  kept.resize(std::min(count, kept.size()));

  std::vector<size_t> selected;
  selected.reserve(kept.size());
  for (const Candidate& c : kept)
    selected.push_back(c.index);
  std::sort(selected.begin(), selected.end(), [&](size_t a, size_t b) {
    return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : names[a] < names[b];
  });
  if (options.shardCount > 1) {
    std::vector<size_t> shard;
    for (size_t i = options.shardIndex; i < selected.size(); i += options.shardCount)
      shard.push_back(selected[i]);
    selected = std::move(shard);
  }
  return selected;
}

Status parseShard(std::string_view text, SelectionOptions& options) {
  auto bad = [&] {
    return makeError(ErrorCode::kInvalidArgument,
                     "--shard='{}': expected K/N with 0 <= K < N (e.g. 0/4)", text);
  };
  size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    return bad();
  uint32_t index = 0;
  uint32_t count = 0;
  const char* end = text.data() + text.size();
  auto k = std::from_chars(text.data(), text.data() + slash, index);
  auto n = std::from_chars(text.data() + slash + 1, end, count);
  if (k.ec != std::errc() || k.ptr != text.data() + slash || n.ec != std::errc() || n.ptr != end ||
      count == 0 || index >= count)
    return bad();
  options.shardIndex = index;
  options.shardCount = count;
  return Status::success();
}

Result<std::vector<size_t>> selectModules(const corpus::Corpus& corpus,
                                          const SelectionOptions& options) {
  std::vector<std::string> names;
  std::vector<uint64_t> sizes;
  for (const auto& module : corpus.modules()) {
    names.push_back(module.name);
    sizes.push_back(module.bitcodeSize);
  }
  return selectModules(names, sizes, options);
}

} // namespace mlgo::trace
