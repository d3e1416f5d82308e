//===- corpus/description.cc - corpus_description.json --------------------===//
#include "mlgo/corpus/description.h"

#include "file_util.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

Result<std::vector<std::string>> stringArray(const llvm::json::Object& object, llvm::StringRef key,
                                             std::string_view source) {
  const llvm::json::Array* array = object.getArray(key);
  if (!array)
    return makeError(ErrorCode::kParse, "{}: '{}' must be an array of strings", source, key.str());
  std::vector<std::string> values;
  values.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    std::optional<llvm::StringRef> value = (*array)[i].getAsString();
    if (!value)
      return makeError(ErrorCode::kParse, "{}: '{}'[{}] is not a string", source, key.str(), i);
    values.push_back(value->str());
  }
  return values;
}

} // namespace

Result<CorpusDescription> parseDescription(std::string_view json, std::string_view source) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed)
    return makeError(ErrorCode::kParse, "{}: malformed JSON: {}", source,
                     llvm::toString(parsed.takeError()));
  const llvm::json::Object* object = parsed->getAsObject();
  if (!object)
    return makeError(ErrorCode::kParse, "{}: expected a JSON object at the top level", source);

  CorpusDescription description;
  if (!object->get("modules"))
    return makeError(ErrorCode::kParse, "{}: missing the 'modules' key", source);
  Result<std::vector<std::string>> modules = stringArray(*object, "modules", source);
  MLGO_TRY(modules);
  description.modules = std::move(*modules);

  if (const llvm::json::Value* thin = object->get("has_thinlto")) {
    std::optional<bool> value = thin->getAsBoolean();
    if (!value)
      return makeError(ErrorCode::kParse, "{}: 'has_thinlto' must be true or false", source);
    description.hasThinLto = *value;
  }
  if (object->get("global_command_override")) {
    Result<std::vector<std::string>> override =
        stringArray(*object, "global_command_override", source);
    MLGO_TRY(override);
    description.globalCommandOverride = std::move(*override);
  }
  return description;
}

Result<CorpusDescription> readDescription(const fs::path& dir) {
  fs::path path = dir / kDescriptionFileName;
  Result<std::string> text = detail::readFile(path, "corpus description");
  MLGO_TRY(text);
  return parseDescription(*text, path.string());
}

std::string formatDescription(const CorpusDescription& description) {
  llvm::json::Object object;
  if (description.globalCommandOverride) {
    llvm::json::Array override;
    for (const std::string& arg : *description.globalCommandOverride)
      override.push_back(arg);
    object["global_command_override"] = std::move(override);
  }
  object["has_thinlto"] = description.hasThinLto;
  llvm::json::Array modules;
  for (const std::string& name : description.modules)
    modules.push_back(name);
  object["modules"] = std::move(modules);

  std::string text;
  llvm::raw_string_ostream out(text);
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(object)));
  out.flush();
  text.push_back('\n');
  return text;
}

Status writeDescription(const fs::path& dir, const CorpusDescription& description) {
  return detail::writeFileAtomic(dir / kDescriptionFileName, formatDescription(description));
}

} // namespace mlgo::corpus
