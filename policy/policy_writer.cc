//===- policy/policy_writer.cc - a policy as the file's JSON ----------------===//
///
/// Policy::toJson() and Policy::text() (policy_file.h): the oldest version
/// that holds the policy, keys in the format's order, numbers as json_text.h
/// writes them (shortest text that reads back to the bit).
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/policy_file.h"

#include "mlgo/policy/json_text.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace mlgo::policy {
namespace json = llvm::json;
namespace {

/// The order keys are written in (docs/policy-format.md's tables); metadata's
/// own keys follow sorted.
constexpr std::array<std::string_view, 21> kKeyOrder = {
    "format", "version", "problem", "features", "transform", "transforms", "margin",
    "mask",   "mean",    "std",     "layers",   "decision",  "metadata",   "weights",
    "bias",   "activation", "plus", "minus",    "anchor",    "floor",      "epsilon"};

json::Array numbers(const std::vector<double>& values) {
  json::Array out;
  out.reserve(values.size());
  for (double v : values)
    out.push_back(v);
  return out;
}

json::Object layerJson(const Layer& layer) {
  json::Array rows;
  for (size_t k = 0; k < layer.inputs; ++k) {
    auto begin = layer.weights.begin() + static_cast<std::ptrdiff_t>(k * layer.outputs);
    rows.push_back(numbers(std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(layer.outputs))));
  }
  return json::Object{{"weights", std::move(rows)},
                      {"bias", numbers(layer.bias)},
                      {"activation", std::string(spelling(layer.activation))}};
}

bool finite(const json::Value& value) {
  if (auto number = value.getAsNumber())
    return std::isfinite(*number);
  if (const json::Array* list = value.getAsArray())
    return std::all_of(list->begin(), list->end(), [](const json::Value& v) { return finite(v); });
  if (const json::Object* object = value.getAsObject())
    return std::all_of(object->begin(), object->end(),
                       [](const auto& member) { return finite(member.second); });
  return true;
}

} // namespace

json::Value Policy::toJson() const {
  const Data& d = *data_;
  bool allLog = std::all_of(d.transforms.begin(), d.transforms.end(),
                            [](Transform t) { return t == Transform::kSignedLog1p; });
  int version = 2;
  if (d.decision == Decision::kArgmaxMasked)
    version = 3;
  else if (!d.margin && d.decision == Decision::kLogitPositive && allLog)
    version = 1;
  json::Array features(d.features);
  json::Object out{{"format", std::string(kFormat)},
                   {"version", version},
                   {"problem", d.problem},
                   {"features", std::move(features)}};
  if (version == 1) {
    out["transform"] = "signed-log1p";
  } else {
    json::Array transforms;
    for (Transform t : d.transforms)
      transforms.push_back(std::string(spelling(t)));
    out["transforms"] = std::move(transforms);
  }
  if (d.margin) {
    json::Object margin{{"plus", d.features[d.margin->plus]},
                        {"minus", d.features[d.margin->minus]},
                        {"floor", d.margin->floor},
                        {"epsilon", d.margin->epsilon}};
    if (d.margin->anchor)
      margin["anchor"] = d.features[*d.margin->anchor];
    out["margin"] = std::move(margin);
  }
  if (d.decision == Decision::kArgmaxMasked)
    out["mask"] = d.mask;
  out["mean"] = numbers(d.mean);
  out["std"] = numbers(d.std);
  json::Array layers;
  for (const Layer& layer : d.layers)
    layers.push_back(layerJson(layer));
  out["layers"] = std::move(layers);
  out["decision"] = std::string(spelling(d.decision));
  out["metadata"] = json::Object(d.metadata);
  return out;
}

Result<std::string> Policy::text() const {
  json::Value value = toJson();
  if (!finite(*value.getAsObject()->get("metadata")))
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: 'metadata' holds NaN or an infinity, which JSON cannot hold",
                     data_->where);
  return jsonText(value, /*indented=*/true, 0, kKeyOrder) + "\n";
}

} // namespace mlgo::policy
