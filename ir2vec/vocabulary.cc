//===- ir2vec/vocabulary.cc - IR2Vec vocabulary files ---------------------===//
#include "mlgo/ir2vec/vocabulary.h"

#include "file_io.h"
#include "number_text.h"

#include "mlgo/ir2vec/entities.h"

#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cmath>

namespace mlgo::ir2vec {
namespace {

std::string_view kindName(const llvm::json::Value& value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return "a boolean";
  case llvm::json::Value::Number:
    return "a number";
  case llvm::json::Value::String:
    return "a string";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  return "something else";
}

/// Accumulates entries while parsing; remembers where the dimension came from.
struct Parser {
  std::string_view origin;
  unsigned dimension = 0;
  std::string dimensionSource;
  std::vector<double> values;
  std::vector<bool> present;
  std::vector<std::string> unknownKeys;

  Error error(std::string message) const {
    return Error(ErrorCode::kParse, fmt::format("{}: {}", origin, message));
  }

  Status parseEntry(Section section, const std::string& key, const llvm::json::Value& value) {
    std::string where = fmt::format("{}.{}", sectionKey(section), key);
    const llvm::json::Array* array = value.getAsArray();
    if (!array)
      return error(
          fmt::format("{} must be an array of numbers (found {})", where, kindName(value)));
    if (array->empty())
      return error(fmt::format("{} is empty: vectors need at least one value", where));
    if (dimension == 0) {
      dimension = static_cast<unsigned>(array->size());
      dimensionSource = where;
      values.assign(entityCount() * dimension, 0.0);
    } else if (array->size() != dimension) {
      return error(fmt::format("{} has {} values, but the dimension is {} (from {})", where,
                               array->size(), dimension, dimensionSource));
    }
    std::vector<double> row(dimension);
    for (size_t i = 0; i < array->size(); ++i) {
      std::optional<double> number = (*array)[i].getAsNumber();
      if (!number)
        return error(
            fmt::format("{}[{}] is not a number (found {})", where, i, kindName((*array)[i])));
      if (!std::isfinite(*number))
        return error(fmt::format("{}[{}] is not a finite number", where, i));
      row[i] = *number;
    }
    std::optional<size_t> id = findEntity(section, key);
    if (!id) {
      unknownKeys.push_back(where);
      return Status::success();
    }
    std::copy(row.begin(), row.end(), values.begin() + static_cast<ptrdiff_t>(*id * dimension));
    present[*id] = true;
    return Status::success();
  }

  Status parseSection(Section section, const llvm::json::Object& root) {
    std::string_view name = sectionKey(section);
    const llvm::json::Value* value = root.get(name);
    if (!value)
      return error(fmt::format("missing the '{}' section (LLVM 22 needs 'Opcodes', 'Types' and "
                               "'Arguments')",
                               name));
    const llvm::json::Object* object = value->getAsObject();
    if (!object)
      return error(fmt::format("section '{}' must be an object mapping entity names to vectors "
                               "(found {})",
                               name, kindName(*value)));
    if (object->empty())
      return error(fmt::format("section '{}' is empty", name));
    // Sorted keys: deterministic messages whatever the map's order.
    std::vector<std::string> keys;
    for (const auto& entry : *object)
      keys.push_back(entry.first.str());
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys)
      MLGO_TRY(parseEntry(section, key, *object->get(key)));
    return Status::success();
  }
};

} // namespace

Result<Vocabulary> Vocabulary::parse(std::string_view json, std::string_view origin) {
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse(llvm::StringRef(json.data(), json.size()));
  if (!root)
    return makeError(ErrorCode::kParse, "{}: not valid JSON: {}", origin,
                     llvm::toString(root.takeError()));
  const llvm::json::Object* object = root->getAsObject();
  if (!object)
    return makeError(ErrorCode::kParse,
                     "{}: the vocabulary must be a JSON object with sections 'Opcodes', 'Types' "
                     "and 'Arguments' (found {})",
                     origin, kindName(*root));
  Parser parser;
  parser.origin = origin;
  parser.present.assign(entityCount(), false);
  for (Section section : kAllSections)
    MLGO_TRY(parser.parseSection(section, *object));
  for (const auto& entry : *object) {
    std::string key = entry.first.str();
    if (key != "Opcodes" && key != "Types" && key != "Arguments")
      parser.unknownKeys.push_back(key);
  }
  std::sort(parser.unknownKeys.begin(), parser.unknownKeys.end());

  Vocabulary vocabulary;
  vocabulary.dimension_ = parser.dimension;
  vocabulary.values_ = std::move(parser.values);
  vocabulary.present_ = std::move(parser.present);
  vocabulary.unknownKeys_ = std::move(parser.unknownKeys);
  return vocabulary;
}

Result<Vocabulary> Vocabulary::load(const std::filesystem::path& path) {
  Result<std::string> content = detail::readFile(path);
  if (!content)
    return std::move(content).error();
  return parse(*content, path.string());
}

Result<Vocabulary> Vocabulary::fromValues(unsigned dimension, std::vector<double> values) {
  if (dimension == 0)
    return makeError(ErrorCode::kInvalidArgument, "vocabulary dimension must be positive");
  if (values.size() != entityCount() * dimension)
    return makeError(ErrorCode::kInvalidArgument,
                     "vocabulary needs {} entities x {} values = {} values, got {}", entityCount(),
                     dimension, entityCount() * dimension, values.size());
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      return makeError(ErrorCode::kInvalidArgument,
                       "vocabulary value {} of entity {} is not finite", i % dimension,
                       entityNames()[i / dimension]);
  Vocabulary vocabulary;
  vocabulary.dimension_ = dimension;
  vocabulary.values_ = std::move(values);
  vocabulary.present_.assign(entityCount(), true);
  return vocabulary;
}

std::string Vocabulary::toJson() const {
  std::string out = "{";
  bool firstSection = true;
  for (Section section : kAllSections) {
    out += firstSection ? "\n" : ",\n";
    firstSection = false;
    fmt::format_to(std::back_inserter(out), "  \"{}\": {{", sectionKey(section));
    bool firstEntry = true;
    for (size_t id = 0; id < entityCount(); ++id) {
      if (entitySection(id) != section)
        continue;
      out += firstEntry ? "\n" : ",\n";
      firstEntry = false;
      // Entity names are plain identifiers: no JSON escaping needed.
      fmt::format_to(std::back_inserter(out), "    \"{}\": [", entityNames()[id]);
      std::span<const double> row = vector(id);
      for (size_t i = 0; i < row.size(); ++i) {
        if (i)
          out += ", ";
        detail::appendNumber(out, row[i]);
      }
      out += "]";
    }
    out += "\n  }";
  }
  out += "\n}\n";
  return out;
}

Status Vocabulary::save(const std::filesystem::path& path) const {
  return detail::writeFileAtomically(path, toJson());
}

std::vector<std::string> Vocabulary::missingEntities() const {
  std::vector<std::string> missing;
  for (size_t id = 0; id < present_.size(); ++id)
    if (!present_[id])
      missing.push_back(entityNames()[id]);
  return missing;
}

std::filesystem::path defaultVocabularyPath() {
  return MLGO_IR2VEC_DEFAULT_VOCAB;
}

std::filesystem::path vocabularyArgument(std::string_view value) {
  return value == "default" ? defaultVocabularyPath() : std::filesystem::path(value);
}

} // namespace mlgo::ir2vec
