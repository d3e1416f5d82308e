//===- trace/trace_header.cc - the header of a trace ------------------------===//
#include "mlgo/trace/trace_header.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace mlgo::trace {

protocol::LogHeader makeTraceHeader(std::span<const protocol::TensorSpec> observation,
                                    const protocol::TensorSpec& action) {
  protocol::LogHeader header;
  header.features.assign(observation.begin(), observation.end());
  header.features.push_back(action);
  // A float [1] is always a valid spec.
  header.score =
      *protocol::TensorSpec::create(std::string(kRewardName), protocol::ElementType::kFloat, {1});
  return header;
}

std::string traceHeaderLine(const protocol::LogHeader& header, const TraceMetadata& metadata) {
  std::string line = header.toJson();
  // toJson() ends with the object's closing brace; the keys go before it.
  line.pop_back();
  llvm::raw_string_ostream out(line);
  auto addKey = [&](std::string_view key, const std::string& value) {
    if (value.empty())
      return;
    out << ",\"" << key << "\":" << llvm::json::Value(value);
  };
  addKey("problem", metadata.problem);
  addKey("policy", metadata.policy);
  addKey("action", metadata.action);
  addKey("ir2vec_vocab", metadata.ir2vecVocabulary);
  addKey("corpus", metadata.corpus);
  auto addList = [&](std::string_view key, const std::vector<std::string>& values) {
    if (values.empty())
      return;
    llvm::json::Array array;
    for (const std::string& value : values)
      array.push_back(value);
    out << ",\"" << key << "\":" << llvm::json::Value(std::move(array));
  };
  const corpus::FlagRules& rules = metadata.flagRules;
  std::vector<std::string> replacements;
  for (const auto& [flag, value] : rules.replaceFlags)
    replacements.push_back(flag + "=" + value);
  addList("delete_flags", rules.deleteFlags);
  addList("replace_flags", replacements);
  addList("add_flags", rules.addFlags);
  out << '}';
  return line;
}

Result<TraceMetadata> readTraceMetadata(std::string_view headerLine) {
  auto parsed = llvm::json::parse(llvm::StringRef(headerLine.data(), headerLine.size()));
  if (!parsed)
    return makeError(ErrorCode::kParse, "header: invalid JSON: {}",
                     llvm::toString(parsed.takeError()));
  const auto* object = parsed->getAsObject();
  if (object == nullptr)
    return makeError(ErrorCode::kParse, "header: expected a JSON object");
  TraceMetadata metadata;
  for (auto [key, field] :
       {std::pair{"problem", &metadata.problem}, std::pair{"policy", &metadata.policy},
        std::pair{"action", &metadata.action},
        std::pair{"ir2vec_vocab", &metadata.ir2vecVocabulary},
        std::pair{"corpus", &metadata.corpus}}) {
    const llvm::json::Value* value = object->get(key);
    if (value == nullptr)
      continue;
    auto text = value->getAsString();
    if (!text)
      return makeError(ErrorCode::kParse, "header: '{}' must be a string", key);
    *field = text->str();
  }
  std::vector<std::string> lists[3];
  const char* listKeys[3] = {"delete_flags", "replace_flags", "add_flags"};
  for (int k = 0; k < 3; ++k) {
    const llvm::json::Value* value = object->get(listKeys[k]);
    if (value == nullptr)
      continue;
    const llvm::json::Array* array = value->getAsArray();
    if (array == nullptr)
      return makeError(ErrorCode::kParse, "header: '{}' must be an array of strings", listKeys[k]);
    for (const llvm::json::Value& item : *array) {
      auto text = item.getAsString();
      if (!text)
        return makeError(ErrorCode::kParse, "header: '{}' must be an array of strings",
                         listKeys[k]);
      lists[k].push_back(text->str());
    }
  }
  auto rules = corpus::parseFlagRules(std::move(lists[0]), lists[1], std::move(lists[2]));
  if (!rules.ok())
    return makeError(ErrorCode::kParse, "header: recompile flag rules: {}",
                     rules.error().message());
  metadata.flagRules = std::move(*rules);
  return metadata;
}

std::string contextName(std::string_view module, std::string_view function) {
  if (function.empty())
    return std::string(module);
  std::string name;
  name.reserve(module.size() + 1 + function.size());
  name.append(module).append(":").append(function);
  return name;
}

std::optional<std::pair<std::string, std::string>>
splitContextName(std::string_view context, std::span<const std::string> sortedModules) {
  auto known = [&](std::string_view name) {
    return std::binary_search(sortedModules.begin(), sortedModules.end(), name,
                              [](std::string_view a, std::string_view b) { return a < b; });
  };
  if (known(context))
    return std::pair{std::string(context), std::string()};
  for (size_t colon = context.rfind(':'); colon != std::string_view::npos && colon > 0;
       colon = context.rfind(':', colon - 1)) {
    if (known(context.substr(0, colon)))
      return std::pair{std::string(context.substr(0, colon)),
                       std::string(context.substr(colon + 1))};
  }
  return std::nullopt;
}

bool isKnownActionName(std::string_view name) {
  return name == "inlining_decision" || name == "index_to_evict" || name == "priority";
}

} // namespace mlgo::trace
