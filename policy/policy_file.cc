//===- policy/policy_file.cc - reading and validating policy files ----------===//
///
/// The checks run in the order docs/policy-format.md lists them, each
/// refusal with its message there (tests/data/policies/ pins them). Writing
/// is policy_writer.cc.
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/policy_file.h"

#include "mlgo/policy/json_text.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cmath>
#include <cstring>
#include <tuple>

namespace mlgo::policy {

namespace json = llvm::json;

std::string_view spelling(Decision decision) {
  switch (decision) {
  case Decision::kLogitPositive:
    return "logit>0";
  case Decision::kFlipDefault:
    return "flip-default-if-logit>0";
  case Decision::kArgmaxMasked:
    return "argmax-masked";
  }
  return "?";
}

std::string_view spelling(Transform transform) {
  return transform == Transform::kIdentity ? "identity" : "signed-log1p";
}

std::string_view spelling(Activation activation) {
  constexpr std::string_view kNames[] = {"tanh", "relu", "linear"}; // Activation's order
  return kNames[static_cast<size_t>(activation)];
}

namespace {

bool isNumber(const json::Value& value) {
  return value.kind() == json::Value::Number;
}

} // namespace

/// Builds a Policy::Data from parsed JSON; every error names `where`.
class PolicyParser {
public:
  explicit PolicyParser(std::string where) : where_(std::move(where)) {}

  Result<Policy> parse(const json::Value& root);

private:
  template <typename... Args> Error fail(fmt::format_string<Args...> format, Args&&... args) {
    return Error(ErrorCode::kParse,
                 fmt::format("{}: {}", where_, fmt::format(format, std::forward<Args>(args)...)));
  }
  Status header(const json::Object& obj);
  Status featureList(const json::Object& obj);
  Status transforms(const json::Object& obj);
  Status margin(const json::Object& obj);
  Result<std::vector<double>> numbers(const json::Value* value, std::string_view what,
                                      std::optional<size_t> length);
  Status layers(const json::Object& obj);
  Result<Layer> layer(const json::Value& raw, size_t index, size_t inputs);
  Status decision(const json::Object& obj);

  std::string where_;
  Policy::Data data_;
};

Status PolicyParser::header(const json::Object& obj) {
  const json::Value* format = obj.get("format");
  auto formatText = format != nullptr ? format->getAsString() : std::nullopt;
  if (!formatText || std::string_view(*formatText) != kFormat)
    return fail("'format' is {}, expected \"{}\"", shownValue(format), kFormat);
  const json::Value* version = obj.get("version");
  auto number = version != nullptr && isNumber(*version) ? version->getAsInteger() : std::nullopt;
  if (!number || *number < 1 || *number > kNewestVersion)
    return fail("version {} is not supported (this reader knows 1, 2 and 3)", shownValue(version));
  data_.version = static_cast<int>(*number);
  auto problem = obj.getString("problem");
  if (!problem || problem->empty())
    return fail("'problem' must name the problem");
  data_.problem = problem->str();
  if (data_.problem != "inlining" && data_.problem != "regalloc")
    return fail("problem '{}' has no policy form (policies are for inlining or regalloc)",
                data_.problem);
  return Status::success();
}

Status PolicyParser::featureList(const json::Object& obj) {
  const json::Array* features = obj.getArray("features");
  bool ok = features != nullptr && !features->empty();
  for (size_t i = 0; ok && i < features->size(); ++i) {
    auto name = (*features)[i].getAsString();
    ok = name && !name->empty();
    if (ok)
      data_.features.push_back(name->str());
  }
  if (!ok)
    return fail("'features' must be a non-empty list of names");
  for (size_t i = 0; i < data_.features.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (data_.features[i] == data_.features[j])
        return fail("'features' names a feature twice");
  return Status::success();
}

Status PolicyParser::transforms(const json::Object& obj) {
  size_t n = data_.features.size();
  if (data_.version == 1) {
    const json::Value* one = obj.get("transform");
    auto text = one != nullptr ? one->getAsString() : std::nullopt;
    if (one != nullptr && (!text || *text != "signed-log1p"))
      return fail("unknown transform {}", shownValue(one));
    data_.transforms.assign(n, Transform::kSignedLog1p);
    return Status::success();
  }
  const json::Array* list = obj.getArray("transforms");
  if (list == nullptr || list->size() != n)
    return fail("'transforms' must list one transform per feature ({})", n);
  for (const json::Value& t : *list) {
    auto text = t.getAsString();
    if (text && *text == "signed-log1p")
      data_.transforms.push_back(Transform::kSignedLog1p);
    else if (text && *text == "identity")
      data_.transforms.push_back(Transform::kIdentity);
    else
      return fail("unknown transform {} (known: signed-log1p, identity)", shownValue(&t));
  }
  return Status::success();
}

Status PolicyParser::margin(const json::Object& obj) {
  const json::Value* raw = obj.get("margin");
  if (data_.version < 2 || raw == nullptr || raw->getAsNull())
    return Status::success();
  const json::Object* spec = raw->getAsObject();
  if (spec == nullptr)
    return fail("'margin' must be an object");
  Margin margin;
  auto feature = [&](const char* key, bool optional) -> Result<std::optional<size_t>> {
    const json::Value* name = spec->get(key);
    if (optional && (name == nullptr || name->getAsNull()))
      return std::optional<size_t>();
    auto text = name != nullptr ? name->getAsString() : std::nullopt;
    for (size_t i = 0; text && i < data_.features.size(); ++i)
      if (data_.features[i] == *text)
        return std::optional<size_t>(i);
    return fail("'margin' {} {} is not one of the features", key, shownValue(name));
  };
  auto plus = feature("plus", false);
  if (!plus.ok())
    return plus.error();
  auto minus = feature("minus", false);
  if (!minus.ok())
    return minus.error();
  auto anchor = feature("anchor", true);
  if (!anchor.ok())
    return anchor.error();
  margin.plus = **plus;
  margin.minus = **minus;
  margin.anchor = *anchor;
  for (auto [key, out, fallback] : {std::tuple("floor", &margin.floor, std::optional<double>()),
                                    std::tuple("epsilon", &margin.epsilon, std::optional(0.5))}) {
    const json::Value* value = spec->get(key);
    std::optional<double> number = fallback;
    if (value != nullptr)
      number = isNumber(*value) ? value->getAsNumber() : std::nullopt;
    if (!number || !std::isfinite(*number) || (std::string_view(key) == "epsilon" && *number < 0))
      return fail("'margin' {} must be a finite number", key);
    *out = *number;
  }
  if (data_.problem != "inlining")
    return fail("'margin' is for inlining policies");
  data_.margin = margin;
  return Status::success();
}

Result<std::vector<double>> PolicyParser::numbers(const json::Value* value, std::string_view what,
                                                  std::optional<size_t> length) {
  const json::Array* list = value != nullptr ? value->getAsArray() : nullptr;
  std::vector<double> out;
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    if (!isNumber((*list)[i])) {
      list = nullptr;
      break;
    }
    out.push_back(*(*list)[i].getAsNumber());
  }
  if (list == nullptr)
    return fail("{} must be a list of numbers", what);
  if (length && out.size() != *length)
    return fail("{} has {} values, expected {}", what, out.size(), *length);
  for (double v : out)
    if (!std::isfinite(v))
      return fail("{} holds a value that is not finite", what);
  return out;
}

Result<Layer> PolicyParser::layer(const json::Value& raw, size_t index, size_t inputs) {
  std::string lw = fmt::format("layer {}", index);
  const json::Object* obj = raw.getAsObject();
  if (obj == nullptr)
    return fail("{}: not an object", lw);
  const json::Array* rows = obj->getArray("weights");
  if (rows == nullptr || rows->size() != inputs)
    return fail("{}: 'weights' must have {} rows (one per input{})", lw, inputs,
                index == 0 && data_.margin ? ", the margin first" : "");
  const json::Array* first = (*rows)[0].getAsArray();
  size_t outputs = first != nullptr ? first->size() : 0;
  if (outputs == 0)
    return fail("{}: 'weights' rows must be non-empty lists", lw);
  Layer layer;
  layer.inputs = inputs;
  layer.outputs = outputs;
  for (size_t j = 0; j < inputs; ++j) {
    auto row = numbers(&(*rows)[j], fmt::format("{}: 'weights' row {}", lw, j), outputs);
    if (!row.ok())
      return row.error();
    layer.weights.insert(layer.weights.end(), row->begin(), row->end());
  }
  auto bias = numbers(obj->get("bias"), fmt::format("{}: 'bias'", lw), outputs);
  if (!bias.ok())
    return bias.error();
  layer.bias = std::move(*bias);
  const json::Value* act = obj->get("activation");
  auto name = act != nullptr ? act->getAsString() : std::nullopt;
  if (name && *name == "tanh")
    layer.activation = Activation::kTanh;
  else if (name && *name == "relu")
    layer.activation = Activation::kRelu;
  else if (name && *name == "linear")
    layer.activation = Activation::kLinear;
  else
    return fail("{}: activation {} is not one of tanh, relu, linear", lw, shownValue(act));
  return layer;
}

Status PolicyParser::layers(const json::Object& obj) {
  const json::Array* raw = obj.getArray("layers");
  if (raw == nullptr || raw->empty())
    return fail("'layers' must be a non-empty list");
  size_t inputs = data_.features.size() + (data_.margin ? 1 : 0);
  for (size_t i = 0; i < raw->size(); ++i) {
    auto layer = this->layer((*raw)[i], i, inputs);
    if (!layer.ok())
      return layer.error();
    inputs = layer->outputs;
    data_.layers.push_back(std::move(*layer));
  }
  if (inputs != 1)
    return fail("the last layer has {} outputs, expected 1 logit", inputs);
  return Status::success();
}

Status PolicyParser::decision(const json::Object& obj) {
  const json::Value* raw = obj.get("decision");
  auto text = raw != nullptr ? raw->getAsString() : std::optional<llvm::StringRef>("logit>0");
  std::vector<Decision> known = {Decision::kLogitPositive};
  if (data_.version >= 2)
    known.push_back(Decision::kFlipDefault);
  if (data_.version >= 3)
    known.push_back(Decision::kArgmaxMasked);
  std::string list;
  bool found = false;
  for (Decision d : known) {
    list += fmt::format("{}{}", list.empty() ? "" : ", ", spelling(d));
    if (text && std::string_view(*text) == spelling(d)) {
      data_.decision = d;
      found = true;
    }
  }
  if (!found)
    return fail("decision {} is not one of {}", shownValue(raw), list);
  bool hasDefault = false;
  for (const std::string& f : data_.features)
    hasDefault = hasDefault || f == kInliningDefaultFeature;
  if (data_.decision == Decision::kFlipDefault && !hasDefault)
    return fail("decision '{}' needs the feature '{}' among the features", spelling(data_.decision),
                kInliningDefaultFeature);
  bool candidates = data_.decision == Decision::kArgmaxMasked;
  if (candidates != (data_.problem == "regalloc"))
    return candidates
               ? fail("decision 'argmax-masked' is for problem 'regalloc', not '{}'", data_.problem)
               : fail("problem 'regalloc' policies decide with 'argmax-masked' "
                      "(version 3), not '{}'",
                      spelling(data_.decision));
  if (candidates) {
    const json::Value* mask = obj.get("mask");
    auto name = mask != nullptr ? mask->getAsString() : std::optional<llvm::StringRef>("mask");
    if (!name || name->empty())
      return fail("'mask' must name the mask feature");
    data_.mask = name->str();
  }
  return Status::success();
}

Result<Policy> PolicyParser::parse(const json::Value& root) {
  const json::Object* obj = root.getAsObject();
  if (obj == nullptr)
    return fail("not a JSON object");
  data_.where = where_;
  MLGO_TRY(header(*obj));
  MLGO_TRY(featureList(*obj));
  MLGO_TRY(transforms(*obj));
  MLGO_TRY(margin(*obj));
  size_t n = data_.features.size();
  auto mean = numbers(obj->get("mean"), "'mean'", n);
  if (!mean.ok())
    return mean.error();
  auto deviation = numbers(obj->get("std"), "'std'", n);
  if (!deviation.ok())
    return deviation.error();
  for (double s : *deviation)
    if (!(s > 0))
      return fail("'std' must be positive");
  data_.mean = std::move(*mean);
  data_.std = std::move(*deviation);
  MLGO_TRY(layers(*obj));
  if (const json::Value* metadata = obj->get("metadata")) {
    if (metadata->getAsObject() == nullptr)
      return fail("'metadata' must be an object");
    data_.metadata = *metadata->getAsObject();
  }
  MLGO_TRY(decision(*obj));
  return Policy(std::make_shared<const Policy::Data>(std::move(data_)));
}

Result<Policy> Policy::parse(std::string_view text, std::string_view where) {
  auto root = json::parse(llvm::StringRef(text.data(), text.size()));
  if (!root) {
    std::string message = llvm::toString(root.takeError());
    return makeError(ErrorCode::kParse, "{} is not valid JSON: {}", where, message);
  }
  return fromJson(*root, where);
}

Result<Policy> Policy::fromJson(const json::Value& root, std::string_view where) {
  return PolicyParser(std::string(where)).parse(root);
}

Result<Policy> Policy::load(const std::filesystem::path& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxPolicyFileBytes)
    return makeError(ErrorCode::kParse, "policy '{}' is larger than {} MiB", path.string(),
                     kMaxPolicyFileBytes >> 20);
  // MemoryBuffer reports what the system said: a directory, a missing file
  // and a read error are refused as such, never read as empty text.
  auto buffer = llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code error = buffer.getError();
    return makeError(error == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound
                                                                   : ErrorCode::kIo,
                     "cannot read policy '{}': {}", path.string(), error.message());
  }
  llvm::StringRef text = (*buffer)->getBuffer();
  return parse(std::string_view(text.data(), text.size()),
               fmt::format("policy '{}'", path.string()));
}

Status Policy::checkProblem(std::string_view problem) const {
  if (data_->problem != problem)
    return makeError(ErrorCode::kInvalidArgument, "{} is for problem '{}', not '{}'", data_->where,
                     data_->problem, problem);
  return Status::success();
}

} // namespace mlgo::policy
