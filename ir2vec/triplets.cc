//===- ir2vec/triplets.cc - knowledge-graph triplets ----------------------===//
#include "mlgo/ir2vec/triplets.h"

#include "file_io.h"
#include "rng.h"

#include "mlgo/ir2vec/entities.h"

#include <algorithm>
#include <charconv>

namespace mlgo::ir2vec {
namespace {

/// Splits text into lines (without '\n'), tracking 1-based line numbers.
class LineReader {
public:
  explicit LineReader(std::string_view text) : text_(text) {}

  bool next(std::string_view& line) {
    if (pos_ >= text_.size())
      return false;
    previousPos_ = pos_;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos)
      end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  size_t number() const { return number_; }
  /// Makes next() return the line it returned last once more.
  void unread() {
    pos_ = previousPos_;
    --number_;
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t previousPos_ = 0;
  size_t number_ = 0;
};

bool parseUint(std::string_view text, uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

/// "KEYWORD <count>" header lines.
bool parseHeader(std::string_view line, std::string_view keyword, uint64_t& count) {
  if (line.size() <= keyword.size() + 1 || line.substr(0, keyword.size()) != keyword ||
      line[keyword.size()] != ' ')
    return false;
  return parseUint(line.substr(keyword.size() + 1), count);
}

/// "head<TAB>tail<TAB>relation"; whitespace other than tabs is accepted too.
bool parseTriplet(std::string_view line, Triplet& out) {
  uint64_t fields[3];
  size_t pos = 0;
  for (uint64_t& field : fields) {
    while (pos < line.size() && (line[pos] == '\t' || line[pos] == ' '))
      ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != '\t' && line[end] != ' ')
      ++end;
    if (!parseUint(line.substr(pos, end - pos), field) || field > UINT32_MAX)
      return false;
    pos = end;
  }
  while (pos < line.size() && (line[pos] == '\t' || line[pos] == ' '))
    ++pos;
  if (pos != line.size())
    return false;
  out = {static_cast<uint32_t>(fields[0]), static_cast<uint32_t>(fields[1]),
         static_cast<uint32_t>(fields[2])};
  return true;
}

struct Reader {
  std::string_view origin;
  LineReader lines;

  Error error(std::string message) const {
    return Error(ErrorCode::kParse,
                 fmt::format("{}:{}: {}", origin, lines.number(), std::move(message)));
  }

  Status readNames(std::string_view keyword, std::vector<std::string>& names) {
    std::string_view line;
    uint64_t count = 0;
    if (!lines.next(line) || !parseHeader(line, keyword, count))
      return error(fmt::format("expected '{} <count>'", keyword));
    for (uint64_t i = 0; i < count; ++i) {
      if (!lines.next(line))
        return error(fmt::format("file ends after {} of {} {} names", i, count, keyword));
      if (line.empty())
        return error(fmt::format("empty name in {}", keyword));
      names.emplace_back(line);
    }
    return Status::success();
  }

  Status readTriplets(uint64_t expected, bool counted, std::vector<Triplet>& out) {
    std::string_view line;
    while (lines.next(line)) {
      if (line.empty())
        continue;
      Triplet triplet;
      if (!parseTriplet(line, triplet))
        return error(fmt::format("expected 'head<TAB>tail<TAB>relation', found '{}'", line));
      out.push_back(triplet);
    }
    if (counted && out.size() != expected)
      return error(
          fmt::format("TRIPLETS announced {} triplets but the file has {}", expected, out.size()));
    return Status::success();
  }

  Result<TripletSet> readOwnFormat() {
    TripletSet set;
    std::string_view line;
    uint64_t count = 0;
    MLGO_TRY(readNames("ENTITIES", set.entities));
    MLGO_TRY(readNames("RELATIONS", set.relations));
    if (!lines.next(line) || !parseHeader(line, "TRIPLETS", count))
      return error("expected 'TRIPLETS <count>'");
    MLGO_TRY(readTriplets(count, true, set.triplets));
    return set;
  }

  Result<TripletSet> readLlvmFormat(uint64_t maxRelation) {
    if (maxRelation < kNextRelation)
      return error("MAX_RELATION must be at least 1");
    TripletSet set;
    set.entities = entityNames();
    set.relations = relationNames(static_cast<uint32_t>(maxRelation - 1), false);
    MLGO_TRY(readTriplets(0, false, set.triplets));
    return set;
  }
};

} // namespace

Status TripletSet::validate() const {
  for (size_t i = 0; i < triplets.size(); ++i) {
    const Triplet& t = triplets[i];
    if (t.head >= entities.size() || t.tail >= entities.size())
      return makeError(ErrorCode::kParse,
                       "triplet {} ({} {} {}) names an entity id beyond the {} entities", i, t.head,
                       t.tail, t.relation, entities.size());
    if (t.relation >= relations.size())
      return makeError(ErrorCode::kParse,
                       "triplet {} ({} {} {}) names a relation id beyond the {} relations", i,
                       t.head, t.tail, t.relation, relations.size());
  }
  return Status::success();
}

Result<TripletSet> TripletSet::parse(std::string_view text, std::string_view origin) {
  Reader reader{origin, LineReader(text)};
  std::string_view line;
  // Skip comments; the first other line decides the format.
  do {
    if (!reader.lines.next(line))
      return makeError(ErrorCode::kParse, "{}: no triplets (the file is empty)", origin);
  } while (line.empty() || line.front() == '#');

  Result<TripletSet> set = makeError(ErrorCode::kInternal, "unset");
  uint64_t maxRelation = 0;
  if (line.starts_with("MAX_RELATION=")) {
    if (!parseUint(line.substr(13), maxRelation))
      return reader.error(fmt::format("bad MAX_RELATION line '{}'", line));
    set = reader.readLlvmFormat(maxRelation);
  } else if (line.starts_with("ENTITIES ")) {
    reader.lines.unread();
    set = reader.readOwnFormat();
  } else {
    return reader.error("expected 'ENTITIES <count>' (mlgo-env triplets) or 'MAX_RELATION=<n>' "
                        "(llvm-ir2vec triplets)");
  }
  if (!set)
    return set;
  if (Status valid = set->validate(); !valid)
    return valid.error().withContext(origin);
  return set;
}

Result<TripletSet> TripletSet::load(const std::filesystem::path& path) {
  Result<std::string> content = detail::readFile(path);
  if (!content)
    return std::move(content).error();
  return parse(*content, path.string());
}

std::string TripletSet::toText() const {
  std::string out = "# mlgo-env IR2Vec triplets\n";
  fmt::format_to(std::back_inserter(out), "ENTITIES {}\n", entities.size());
  for (const std::string& name : entities)
    fmt::format_to(std::back_inserter(out), "{}\n", name);
  fmt::format_to(std::back_inserter(out), "RELATIONS {}\n", relations.size());
  for (const std::string& name : relations)
    fmt::format_to(std::back_inserter(out), "{}\n", name);
  fmt::format_to(std::back_inserter(out), "TRIPLETS {}\n", triplets.size());
  for (const Triplet& t : triplets)
    fmt::format_to(std::back_inserter(out), "{}\t{}\t{}\n", t.head, t.tail, t.relation);
  return out;
}

Status TripletSet::save(const std::filesystem::path& path) const {
  return detail::writeFileAtomically(path, toText());
}

std::vector<std::string> relationNames(uint32_t maxArgs, bool withPredicate) {
  std::vector<std::string> names = {"Type", "Next"};
  for (uint32_t k = 0; k < maxArgs; ++k)
    names.push_back(fmt::format("Arg{}", k));
  if (withPredicate)
    names.emplace_back(kPredicateRelationName);
  return names;
}

std::pair<TripletSet, TripletSet> splitTriplets(const TripletSet& all, double testFraction,
                                                uint64_t seed) {
  std::vector<Triplet> shuffled = all.triplets;
  detail::Rng rng(seed, 0x5b11u);
  rng.shuffle(shuffled.data(), shuffled.size());
  size_t testCount = 0;
  if (testFraction > 0 && shuffled.size() >= 2) {
    testCount = static_cast<size_t>(testFraction * static_cast<double>(shuffled.size()));
    testCount = std::clamp<size_t>(testCount, 1, shuffled.size() - 1);
  }
  TripletSet train{all.entities, all.relations, {}};
  TripletSet test{all.entities, all.relations, {}};
  test.triplets.assign(shuffled.begin(), shuffled.begin() + static_cast<ptrdiff_t>(testCount));
  train.triplets.assign(shuffled.begin() + static_cast<ptrdiff_t>(testCount), shuffled.end());
  std::sort(train.triplets.begin(), train.triplets.end());
  std::sort(test.triplets.begin(), test.triplets.end());
  return {std::move(train), std::move(test)};
}

} // namespace mlgo::ir2vec
