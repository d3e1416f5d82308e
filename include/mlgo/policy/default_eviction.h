//===- mlgo/policy/default_eviction.h - default eviction on the host -*- C++ -*-===//
///
/// \file
/// Stock clang-22 does not tell the host which live range its default
/// eviction advisor would evict. This is an emulation of that advisor
/// computed from the observation alone, named with a version
/// (kDefaultEvictionPolicyName) so traces and agents know what they hold.
///
/// What the features mean (LLVM's ML eviction advisor fills them; one
/// column per register of the allocation order, the last column is the live
/// range being allocated):
///  - `mask[i]`: the register's interferences may legally be evicted (no
///    fixed-register interference, fewer than the interference cutoff, no
///    spill products, cascade numbers allow it or the eviction is urgent).
///    The last column is 0 when clang must evict something (an unspillable
///    range).
///  - `use_def_density[i]`: the largest spill weight among the column's
///    interfering ranges, divided by the largest value over all columns
///    (the allocated range's own weight included). Unspillable ranges weigh
///    infinity, so their column reads NaN.
///  - `nr_broken_hints[i]`, `nr_urgent[i]`: how many interfering ranges sit
///    in their preferred register / may break a cascade only because the
///    eviction is urgent; both divided by their largest column.
///  - `is_hint[i]`: the register is the allocated range's preferred one.
///  - `is_local[i]` (not normalised): how many interferences are local to a
///    block, as the allocated range is.
///
/// The default advisor's choice, as the emulation applies it (one rule per
/// step, each unit-tested in default_eviction_test.cc):
///  1. legality: only columns with mask == 1 are considered;
///  2. weight: every interference must be lighter than the allocated range
///     (use_def_density[i] < use_def_density[last]; +infinity when the last
///     column is masked or NaN); a NaN column (an unspillable interference)
///     never qualifies;
///  3. cost: (broken hints + 10 x urgent cascade breaks, max weight),
///     compared lexicographically; a column must be strictly cheaper than
///     the best so far (ties keep the earlier register). Raw counts are
///     recovered from the normalised values (they are small integers
///     divided by their maximum);
///  4. local ranges: once a candidate is found, a column with a local
///     interference (is_local > 0) is not taken, unless the allocated range
///     is unspillable (its mask is 0: every spillable interference is then
///     urgent, and clang tests urgent ones before this rule; new in v2);
///  5. hint: a qualifying preferred register ends the search;
///  6. nothing qualifies: evict nothing (the last column), or when that is
///     masked, the cheapest legal column by rule 3 alone (else the first
///     legal one).
/// What the features do not show makes it an emulation rather than a copy:
/// above all, when a legal column holds an unspillable interference (weight
/// infinity) clang's normalisation leaves that column NaN and every other
/// weight, the allocated range's own included, 0 - the step has no weight
/// order, rule 2 never holds, and the emulation evicts nothing where clang
/// may evict (research/regalloc_poisoned_steps.py counts such steps); also
/// cascades of equal number, and on targets other than x86-64 a cost-per-use
/// limit. docs/regalloc.md ("The default decision") says how close it comes.
///
/// Immutable and thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_POLICY_DEFAULT_EVICTION_H
#define MLGO_POLICY_DEFAULT_EVICTION_H

#include "mlgo/protocol/training_log.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace mlgo::policy {

/// The emulation's name and version, as traces and `describe` report it.
/// Earlier version: `host-emulation-v1` (until 2026-11-26; traces made then
/// carry it in their header) applied rule 4 to unspillable ranges too.
inline constexpr std::string_view kDefaultEvictionPolicyName = "host-emulation-v2";

/// The features the emulation reads, one value per column (the last column
/// is the live range being allocated). All vectors have the same size >= 1.
struct EvictionColumns {
  std::vector<int64_t> mask;
  std::vector<int64_t> isHint;
  std::vector<int64_t> isLocal;
  std::vector<float> brokenHints; ///< nr_broken_hints (normalised).
  std::vector<float> urgent;      ///< nr_urgent (normalised).
  std::vector<float> weight;      ///< use_def_density (normalised).
};

/// The column the default advisor would choose (rules above); always one
/// with mask == 1 when any column has it, else the last column.
int64_t chooseDefaultEviction(const EvictionColumns& columns);

/// The emulation bound to one header: where its features are.
class DefaultEvictionPolicy {
public:
  /// kUnsupported naming the missing or misshapen feature when the header
  /// lacks one of mask, is_hint, is_local, nr_broken_hints, nr_urgent,
  /// use_def_density, or their element counts differ.
  static Result<DefaultEvictionPolicy> create(std::span<const protocol::TensorSpec> features);
  static Result<DefaultEvictionPolicy> create(const protocol::LogHeader& header) {
    return create(header.features);
  }

  /// The decision for one observation (`tensors`: one view per header
  /// feature, sized as the header says).
  int64_t choose(std::span<const std::span<const std::byte>> tensors) const;
  /// The features of one observation as columns.
  EvictionColumns columns(std::span<const std::span<const std::byte>> tensors) const;

private:
  struct Feature {
    size_t index;
    protocol::TensorSpec spec;
  };
  DefaultEvictionPolicy() = default;
  /// Reads mask, is_hint, is_local into `integers` and nr_broken_hints,
  /// nr_urgent, use_def_density into `floats` (each sized to the columns).
  void read(std::span<const std::span<const std::byte>> tensors,
            const std::span<int64_t> (&integers)[3], const std::span<float> (&floats)[3]) const;

  std::vector<Feature> features_; ///< In EvictionColumns order.
  size_t columns_ = 0;
};

} // namespace mlgo::policy

#endif // MLGO_POLICY_DEFAULT_EVICTION_H
