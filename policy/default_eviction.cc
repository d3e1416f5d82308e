//===- policy/default_eviction.cc - default eviction on the host ------------===//
#include "mlgo/policy/default_eviction.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <llvm/ADT/SmallVector.h>

namespace mlgo::policy {
namespace {

/// The features, in EvictionColumns order.
constexpr std::array<std::string_view, 6> kFeatureNames = {
    "mask", "is_hint", "is_local", "nr_broken_hints", "nr_urgent", "use_def_density"};

/// What the default advisor adds to the broken-hint count for each urgent
/// eviction that breaks a cascade.
constexpr double kUrgentCost = 10;

/// Largest count the raw-value recovery tries.
constexpr int kMaxRecoveredCount = 1024;

/// Column buffers live on the stack up to this many columns (clang's
/// eviction problem has 33): choosing runs on every regalloc step.
constexpr unsigned kInlineColumns = 64;
template <typename T> using ColumnBuffer = llvm::SmallVector<T, kInlineColumns>;

/// One observation's eviction features, viewed in place.
struct ColumnViews {
  std::span<const int64_t> mask, isHint, isLocal;
  std::span<const float> brokenHints, urgent, weight;
};

/// std::round (half away from zero) without its library call: every regalloc
/// step rounds a few hundred values here.
double roundHalfAway(double x) {
  if (!(std::abs(x) < 4503599627370496.0)) // 2^52: integral already (or NaN).
    return x;
  double whole = static_cast<double>(static_cast<int64_t>(x)); // Toward zero, exact.
  double rest = x - whole;                                      // Exact too.
  if (rest >= 0.5)
    return whole + 1;
  if (rest <= -0.5)
    return whole - 1;
  return std::copysign(whole, x); // -0.3 rounds to -0, as std::round does.
}

/// Normalised counts are k / M for small integers k and M = the largest k.
/// Writes the raw counts for the smallest M that makes every value an
/// integer (the values themselves when none does) to `raw`.
void recoverCounts(std::span<const float> values, ColumnBuffer<double>& raw) {
  raw.assign(values.begin(), values.end());
  bool any = false;
  for (double v : raw)
    any = any || (std::isfinite(v) && v > 0);
  if (!any)
    return;
  for (int m = 1; m <= kMaxRecoveredCount; ++m) {
    bool integral = true;
    for (double v : raw) {
      // Zeros (and non-finite values, read as 0) are integral at every M:
      // skipped, they cost nothing on the step's hot path.
      if (!std::isfinite(v) || v == 0)
        continue;
      double scaled = v * m;
      if (std::abs(scaled - roundHalfAway(scaled)) > 1e-3) {
        integral = false;
        break;
      }
    }
    if (integral) {
      for (double& v : raw)
        v = std::isfinite(v) ? roundHalfAway(v * m) : 0;
      return;
    }
  }
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

void describeColumns(const ColumnViews& c, ColumnBuffer<Column>& columns) {
  size_t n = c.mask.size();
  size_t self = n - 1;
  ColumnBuffer<double> hints, urgent;
  recoverCounts(c.brokenHints, hints);
  recoverCounts(c.urgent, urgent);
  double ownWeight = c.mask[self] == 1 && !std::isnan(c.weight[self])
                         ? static_cast<double>(c.weight[self])
                         : std::numeric_limits<double>::infinity();
  columns.assign(self, Column{});
  for (size_t i = 0; i < self; ++i) {
    Column& col = columns[i];
    col.legal = c.mask[i] == 1;
    double weight = c.weight[i];
    col.qualifies = col.legal && !std::isnan(weight) && weight < ownWeight;
    col.cost.brokenHints = hints[i] + kUrgentCost * urgent[i];
    col.cost.maxWeight = std::isnan(weight) ? std::numeric_limits<double>::infinity() : weight;
  }
}

int64_t chooseEviction(const ColumnViews& c) {
  size_t n = c.mask.size();
  if (n == 0)
    return 0;
  size_t self = n - 1;
  ColumnBuffer<Column> columns;
  describeColumns(c, columns);
  std::optional<size_t> best;
  Cost bestCost;
  // An unspillable live range (last mask 0) makes every spillable interference
  // urgent, and clang skips the local-range test for urgent ones.
  bool urgent = c.mask[self] != 1;
  for (size_t i = 0; i < self; ++i) {
    const Column& col = columns[i];
    if (!col.qualifies || !(col.cost < bestCost)) // Rules 1-3.
      continue;
    if (best && c.isLocal[i] > 0 && !urgent) // Rule 4.
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

} // namespace

int64_t chooseDefaultEviction(const EvictionColumns& c) {
  return chooseEviction({c.mask, c.isHint, c.isLocal, c.brokenHints, c.urgent, c.weight});
}

Result<DefaultEvictionPolicy>
DefaultEvictionPolicy::create(std::span<const protocol::TensorSpec> features) {
  DefaultEvictionPolicy policy;
  for (std::string_view name : kFeatureNames) {
    auto index = protocol::featureIndex(features, name);
    if (!index)
      return makeError(ErrorCode::kUnsupported,
                       "the default eviction emulation needs feature '{}', which clang's header "
                       "lacks",
                       name);
    const protocol::TensorSpec& spec = features[*index];
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

namespace {
/// Reads one feature's tensor as integer flags or small counts; anything
/// else reads as 0 (no UB on a cast).
void readIntegers(const protocol::TensorSpec& spec, std::span<const std::byte> data,
                  std::span<double> scratch, std::span<int64_t> out) {
  protocol::elementsAsDouble(spec.type(), data.data(), scratch);
  for (size_t i = 0; i < out.size(); ++i) {
    double value = scratch[i];
    out[i] = std::isfinite(value) && std::abs(value) < 1e18 ? static_cast<int64_t>(value) : 0;
  }
}

void readFloats(const protocol::TensorSpec& spec, std::span<const std::byte> data,
                std::span<double> scratch, std::span<float> out) {
  protocol::elementsAsDouble(spec.type(), data.data(), scratch);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(scratch[i]);
}
} // namespace

void DefaultEvictionPolicy::read(std::span<const std::span<const std::byte>> tensors,
                                 const std::span<int64_t> (&integers)[3],
                                 const std::span<float> (&floats)[3]) const {
  ColumnBuffer<double> scratch(columns_);
  for (size_t k = 0; k < 3; ++k) {
    const Feature& f = features_[k];
    readIntegers(f.spec, tensors[f.index], scratch, integers[k]);
  }
  for (size_t k = 0; k < 3; ++k) {
    const Feature& f = features_[3 + k];
    readFloats(f.spec, tensors[f.index], scratch, floats[k]);
  }
}

EvictionColumns
DefaultEvictionPolicy::columns(std::span<const std::span<const std::byte>> tensors) const {
  EvictionColumns c;
  for (auto* column : {&c.mask, &c.isHint, &c.isLocal})
    column->resize(columns_);
  for (auto* column : {&c.brokenHints, &c.urgent, &c.weight})
    column->resize(columns_);
  read(tensors, {c.mask, c.isHint, c.isLocal}, {c.brokenHints, c.urgent, c.weight});
  return c;
}

int64_t DefaultEvictionPolicy::choose(std::span<const std::span<const std::byte>> tensors) const {
  // Read as columns() reads, into buffers on the stack (every regalloc step).
  ColumnBuffer<int64_t> integers[3];
  ColumnBuffer<float> floats[3];
  for (auto& column : integers)
    column.resize(columns_);
  for (auto& column : floats)
    column.resize(columns_);
  read(tensors, {integers[0], integers[1], integers[2]}, {floats[0], floats[1], floats[2]});
  return chooseEviction(
      {integers[0], integers[1], integers[2], floats[0], floats[1], floats[2]});
}

} // namespace mlgo::policy
