//===- protocol/training_log.cc - the log header ---------------------------===//
#include "mlgo/protocol/training_log.h"

#include "json_util.h"

#include <llvm/Support/raw_ostream.h>

namespace mlgo::protocol {

uint64_t LogHeader::observationBytes() const {
  uint64_t total = 0;
  for (const auto& spec : features)
    total += spec.byteSize();
  return total;
}

std::optional<size_t> featureIndex(std::span<const TensorSpec> specs, std::string_view name) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name() == name)
      return i;
  return std::nullopt;
}

Result<LogHeader> LogHeader::fromJson(std::string_view json) {
  auto parsed = llvm::json::parse(llvm::StringRef(json.data(), json.size()));
  if (!parsed)
    return makeError(ErrorCode::kParse, "header: invalid JSON: {}",
                     detail::takeMessage(parsed.takeError()));
  const auto* object = parsed->getAsObject();
  if (!object)
    return makeError(ErrorCode::kParse, "header: expected a JSON object");
  const auto* features = object->getArray("features");
  if (!features)
    return makeError(ErrorCode::kParse, "header: missing array field 'features'");

  LogHeader header;
  header.features.reserve(features->size());
  uint64_t total = 0;
  for (size_t i = 0; i < features->size(); ++i) {
    auto spec = detail::specFromJson((*features)[i], fmt::format("header: feature {}", i));
    if (!spec)
      return std::move(spec).error();
    if (__builtin_add_overflow(total, spec->byteSize(), &total))
      return makeError(ErrorCode::kParse, "header: observation size overflows 64 bits");
    header.features.push_back(std::move(*spec));
  }
  for (const char* key : {"score", "advice"}) {
    const auto* value = object->get(key);
    if (!value)
      continue;
    auto spec = detail::specFromJson(*value, fmt::format("header: '{}'", key));
    if (!spec)
      return std::move(spec).error();
    (key[0] == 's' ? header.score : header.advice) = std::move(*spec);
  }
  return header;
}

std::string LogHeader::toJson() const {
  std::string out;
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  json.object([&] {
    json.attributeArray("features", [&] {
      for (const auto& spec : features)
        detail::writeSpec(json, spec);
    });
    if (score) {
      json.attributeBegin("score");
      detail::writeSpec(json, *score);
      json.attributeEnd();
    }
    if (advice) {
      json.attributeBegin("advice");
      detail::writeSpec(json, *advice);
      json.attributeEnd();
    }
  });
  return out;
}

} // namespace mlgo::protocol
