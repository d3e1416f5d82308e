//===- policy/policy_runner.cc - answering observations with a policy -------===//
///
/// The arithmetic is spelled out in mlgo/policy/policy_runner.h; the Python
/// package runs policies through this file too (python/src/policy_bindings.cc).
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/policy_runner.h"

#include "mlgo/protocol/training_log.h"

#include <cmath>
#include <limits>

namespace mlgo::policy {
namespace {

/// np.maximum / np.minimum: a NaN operand gives NaN.
double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : (a < b ? b : a);
}
double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : (b < a ? b : a);
}

double signedLog1p(double v) {
  if (std::isnan(v))
    return v;
  double sign = v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
  return sign * std::log1p(std::fabs(v));
}

double activate(Activation activation, double x) {
  switch (activation) {
  case Activation::kTanh:
    return std::tanh(x);
  case Activation::kRelu:
    return std::isnan(x) ? x : (x > 0 ? x : 0.0);
  case Activation::kLinear:
    return x;
  }
  return x;
}

} // namespace

Result<BoundPolicy> Policy::bind(std::span<const protocol::TensorSpec> specs) const {
  const Data& d = *data_;
  auto find = [&](const std::string& name) { return protocol::featureIndex(specs, name); };
  auto missing = [&](const std::string& name) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: the observation has no feature '{}' that the policy expects", d.where,
                     name);
  };
  BoundPolicy bound(*this);
  bool candidates = d.decision == Decision::kArgmaxMasked;
  if (candidates) {
    auto mask = find(d.mask);
    if (!mask)
      return missing(d.mask);
    bound.maskTensor_ = *mask;
    bound.maskType_ = specs[*mask].type();
    bound.rows_ = specs[*mask].elementCount();
    if (bound.rows_ == 0)
      return makeError(ErrorCode::kInvalidArgument, "{}: the mask feature '{}' is empty", d.where,
                       d.mask);
  }
  for (size_t j = 0; j < d.features.size(); ++j) {
    const std::string& name = d.features[j];
    auto index = find(name);
    if (!index && candidates && name == kDefaultEvictionPolicyName) {
      auto emulation = DefaultEvictionPolicy::create(specs);
      if (!emulation.ok())
        return makeError(ErrorCode::kInvalidArgument, "{}: feature '{}': {}", d.where, name,
                         emulation.error().message());
      bound.emulation_.emplace(std::move(*emulation));
      bound.columns_.push_back({0, protocol::ElementType::kInt64, true, true});
      continue;
    }
    if (!index)
      return missing(name);
    uint64_t count = specs[*index].elementCount();
    if (!candidates && count != 1)
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: feature '{}' has {} values; policies use one-element features only",
                       d.where, name, count);
    if (candidates && count != 1 && count != bound.rows_)
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: feature '{}' has {} values; regalloc policies use features with one "
                       "value per candidate ({}) or one value",
                       d.where, name, count, bound.rows_);
    bound.columns_.push_back({*index, specs[*index].type(), candidates && count != 1});
    if (name == kInliningDefaultFeature)
      bound.defaultColumn_ = j;
  }
  return bound;
}

double BoundPolicy::value(std::span<const std::span<const std::byte>> tensors, size_t column,
                          size_t row, int64_t emulated) const {
  const Column& c = columns_[column];
  if (c.emulated)
    return static_cast<int64_t>(row) == emulated ? 1.0 : 0.0;
  return protocol::elementAsDouble(c.type, tensors[c.tensor].data(), c.perRow ? row : 0);
}

double Policy::logit(std::span<const double> raw, std::vector<double>& in,
                     std::vector<double>& out) const {
  const Data& d = *data_;
  in.clear();
  if (d.margin) {
    const Margin& m = *d.margin;
    double margin = nanMax(raw[m.plus], m.floor) - raw[m.minus];
    if (m.anchor)
      margin = raw[*m.anchor] > 0.5 ? nanMax(margin, m.epsilon) : nanMin(margin, -m.epsilon);
    in.push_back(margin);
  }
  for (size_t j = 0; j < d.features.size(); ++j) {
    double t = d.transforms[j] == Transform::kSignedLog1p ? signedLog1p(raw[j]) : raw[j];
    in.push_back((t - d.mean[j]) / d.std[j]);
  }
  for (const Layer& layer : d.layers) {
    out.assign(layer.outputs, 0.0);
    for (size_t k = 0; k < layer.inputs; ++k) {
      const double* w = &layer.weights[k * layer.outputs];
      for (size_t o = 0; o < layer.outputs; ++o)
        out[o] += in[k] * w[o];
    }
    for (size_t o = 0; o < layer.outputs; ++o)
      out[o] = activate(layer.activation, out[o] + layer.bias[o]);
    in.swap(out);
  }
  return in[0];
}

void Policy::logits(std::span<const double> rows, std::vector<double>& logits) const {
  size_t n = data_->features.size();
  std::vector<double> a, b;
  logits.resize(rows.size() / n);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = logit(rows.subspan(i * n, n), a, b);
}

Result<std::vector<int8_t>> Policy::decisions(std::span<const double> rows) const {
  const Data& d = *data_;
  if (d.decision == Decision::kArgmaxMasked)
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: a regalloc policy answers a whole observation, not a row", d.where);
  size_t n = d.features.size();
  size_t defaultColumn = 0;
  for (size_t j = 0; j < n; ++j)
    if (d.features[j] == kInliningDefaultFeature)
      defaultColumn = j;
  std::vector<double> logits;
  this->logits(rows, logits);
  std::vector<int8_t> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    bool positive = logits[i] > 0;
    if (d.decision == Decision::kFlipDefault)
      positive = positive != (rows[i * n + defaultColumn] > 0.5);
    out[i] = positive ? 1 : 0;
  }
  return out;
}

double BoundPolicy::logit(std::span<const std::span<const std::byte>> tensors, size_t row,
                          int64_t emulated, Scratch& scratch) const {
  scratch.raw.resize(columns_.size());
  for (size_t j = 0; j < columns_.size(); ++j)
    scratch.raw[j] = value(tensors, j, row, emulated);
  return policy_.logit(scratch.raw, scratch.in, scratch.out);
}

int64_t BoundPolicy::decide(std::span<const std::span<const std::byte>> tensors) const {
  std::vector<double> logits;
  return decide(tensors, logits);
}

int64_t BoundPolicy::decide(std::span<const std::span<const std::byte>> tensors,
                            std::vector<double>& logits) const {
  Scratch scratch;
  logits.clear();
  switch (policy_.decision()) {
  case Decision::kLogitPositive:
    logits.push_back(logit(tensors, 0, -1, scratch));
    return logits[0] > 0 ? 1 : 0;
  case Decision::kFlipDefault: {
    logits.push_back(logit(tensors, 0, -1, scratch));
    bool defaultInlines = value(tensors, defaultColumn_, 0, -1) > 0.5;
    return (logits[0] > 0) != defaultInlines ? 1 : 0;
  }
  case Decision::kArgmaxMasked:
    break;
  }
  int64_t emulated = emulation_ ? emulation_->choose(tensors) : -1;
  int64_t best = -1;
  double bestValue = 0;
  const std::byte* mask = tensors[maskTensor_].data();
  for (size_t i = 0; i < rows_; ++i) {
    logits.push_back(logit(tensors, i, emulated, scratch));
    if (protocol::elementAsDouble(maskType_, mask, i) != 1.0)
      continue;
    double v = std::isnan(logits.back()) ? -std::numeric_limits<double>::infinity() : logits.back();
    if (best < 0 || v > bestValue) {
      best = static_cast<int64_t>(i);
      bestValue = v;
    }
  }
  return best >= 0 ? best : static_cast<int64_t>(rows_) - 1;
}

} // namespace mlgo::policy
