//===- env/regalloc_default_policy.cc - default eviction on the host --------===//
#include "mlgo/env/regalloc_default_policy.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace mlgo::env {
namespace {

/// The features, in EvictionColumns order.
constexpr std::array<std::string_view, 6> kFeatureNames = {
    "mask", "is_hint", "is_local", "nr_broken_hints", "nr_urgent", "use_def_density"};

/// What the default advisor adds to the broken-hint count for each urgent
/// eviction that breaks a cascade.
constexpr double kUrgentCost = 10;

/// Largest count the raw-value recovery tries.
constexpr int kMaxRecoveredCount = 1024;

/// Normalised counts are k / M for small integers k and M = the largest k.
/// Returns the raw counts for the smallest M that makes every value an
/// integer (the values themselves when none does).
std::vector<double> recoverCounts(std::span<const float> values) {
  std::vector<double> raw(values.begin(), values.end());
  bool any = false;
  for (double v : raw)
    any = any || (std::isfinite(v) && v > 0);
  if (!any)
    return raw;
  for (int m = 1; m <= kMaxRecoveredCount; ++m) {
    bool integral = true;
    for (double v : raw) {
      // Zeros (and non-finite values, read as 0) are integral at every M:
      // skipped, they cost nothing on the step's hot path.
      if (!std::isfinite(v) || v == 0)
        continue;
      double scaled = v * m;
      if (std::abs(scaled - std::round(scaled)) > 1e-3) {
        integral = false;
        break;
      }
    }
    if (integral) {
      for (double& v : raw)
        v = std::isfinite(v) ? std::round(v * m) : 0;
      return raw;
    }
  }
  return raw;
}

/// The default advisor's eviction cost (lexicographic).
struct Cost {
  double brokenHints = std::numeric_limits<double>::infinity();
  double maxWeight = std::numeric_limits<double>::infinity();
  bool operator<(const Cost& other) const {
    if (brokenHints != other.brokenHints)
      return brokenHints < other.brokenHints;
    return maxWeight < other.maxWeight;
  }
};

struct Column {
  bool legal = false;
  bool qualifies = false; ///< Rule 2.
  Cost cost;              ///< Rule 3.
};

std::vector<Column> describeColumns(const EvictionColumns& c) {
  size_t n = c.mask.size();
  size_t self = n - 1;
  std::vector<double> hints = recoverCounts(c.brokenHints);
  std::vector<double> urgent = recoverCounts(c.urgent);
  double ownWeight = c.mask[self] == 1 && !std::isnan(c.weight[self])
                         ? static_cast<double>(c.weight[self])
                         : std::numeric_limits<double>::infinity();
  std::vector<Column> columns(self);
  for (size_t i = 0; i < self; ++i) {
    Column& col = columns[i];
    col.legal = c.mask[i] == 1;
    double weight = c.weight[i];
    col.qualifies = col.legal && !std::isnan(weight) && weight < ownWeight;
    col.cost.brokenHints = hints[i] + kUrgentCost * urgent[i];
    col.cost.maxWeight = std::isnan(weight) ? std::numeric_limits<double>::infinity() : weight;
  }
  return columns;
}

} // namespace

int64_t chooseDefaultEviction(const EvictionColumns& c) {
  size_t n = c.mask.size();
  if (n == 0)
    return 0;
  size_t self = n - 1;
  std::vector<Column> columns = describeColumns(c);
  std::optional<size_t> best;
  Cost bestCost;
  for (size_t i = 0; i < self; ++i) {
    const Column& col = columns[i];
    if (!col.qualifies || !(col.cost < bestCost)) // Rules 1-3.
      continue;
    if (best && c.isLocal[i] > 0) // Rule 4.
      continue;
    best = i;
    bestCost = col.cost;
    if (c.isHint[i] == 1) // Rule 5.
      break;
  }
  if (best)
    return static_cast<int64_t>(*best);
  if (c.mask[self] == 1) // Rule 6.
    return static_cast<int64_t>(self);
  std::optional<size_t> cheapest;
  for (size_t i = 0; i < self; ++i) {
    if (columns[i].legal && (!cheapest || columns[i].cost < columns[*cheapest].cost))
      cheapest = i;
  }
  return static_cast<int64_t>(cheapest.value_or(self));
}

Result<DefaultEvictionPolicy> DefaultEvictionPolicy::create(const protocol::LogHeader& header) {
  DefaultEvictionPolicy policy;
  for (std::string_view name : kFeatureNames) {
    auto index = header.featureIndex(name);
    if (!index)
      return makeError(ErrorCode::kUnsupported,
                       "the default eviction emulation needs feature '{}', which clang's header "
                       "lacks",
                       name);
    const protocol::TensorSpec& spec = header.features[*index];
    if (spec.elementCount() < 1 ||
        (policy.columns_ != 0 && spec.elementCount() != policy.columns_))
      return makeError(ErrorCode::kUnsupported,
                       "the default eviction emulation needs feature '{}' with {} elements, "
                       "clang's header has {}",
                       name, policy.columns_, spec.toJson());
    policy.columns_ = spec.elementCount();
    policy.features_.push_back({*index, spec});
  }
  return policy;
}

EvictionColumns
DefaultEvictionPolicy::columns(std::span<const std::span<const std::byte>> tensors) const {
  std::vector<double> values(columns_);
  auto read = [&](size_t feature) {
    const Feature& f = features_[feature];
    protocol::elementsAsDouble(f.spec.type(), tensors[f.index].data(), values);
  };
  auto integers = [&](size_t feature) {
    read(feature);
    std::vector<int64_t> out(columns_);
    for (size_t i = 0; i < columns_; ++i) {
      double value = values[i];
      // Flags and small counts; anything else reads as 0 (no UB on a cast).
      out[i] = std::isfinite(value) && std::abs(value) < 1e18 ? static_cast<int64_t>(value) : 0;
    }
    return out;
  };
  auto floats = [&](size_t feature) {
    read(feature);
    std::vector<float> out(columns_);
    for (size_t i = 0; i < columns_; ++i)
      out[i] = static_cast<float>(values[i]);
    return out;
  };
  EvictionColumns c;
  c.mask = integers(0);
  c.isHint = integers(1);
  c.isLocal = integers(2);
  c.brokenHints = floats(3);
  c.urgent = floats(4);
  c.weight = floats(5);
  return c;
}

int64_t DefaultEvictionPolicy::choose(std::span<const std::span<const std::byte>> tensors) const {
  return chooseDefaultEviction(columns(tensors));
}

} // namespace mlgo::env
