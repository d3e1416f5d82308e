//===- mlgo/env/fixed_priorities.h - priorities the host answers -*- C++ -*-===//
///
/// \file
/// The eviction problem under priorities the host sets: what a joint search
/// of priority and eviction decisions runs its eviction half on.
///
/// clang-22 asks the priority of each live range on its own channel
/// (`regalloc-priority`) and the eviction on another (`regalloc`); one
/// compile serves both (compiler_session.h, CompileCommand::extraChannels),
/// and within a function each stream depends on the other's answers. With
/// EnvironmentOptions::fixedPriorities, an episode of the `regalloc` problem
/// of a module the file lists also opens the priority channel and answers it
/// itself: the k-th priority question of function F gets the `weight`
/// fallback's priority (weight x 1000, kPriorityFallbacks) times F's
/// multiplier for k (1 where the file gives none), clamped to the priority
/// rule's range. The agent sees and answers the eviction questions only,
/// as without the file; a module the file does not list keeps clang's own
/// priorities (no second channel). Default scores stay clang's plain
/// compile, so the reward compares priorities and evictions together
/// against clang's own.
///
/// The file is what research/priority_search.py writes, extra fields
/// ignored:
///
///   {"modules": [{"module": "src/a.o",
///                 "functions": {"f": {"multipliers": {"12": 16.0, "40": 0.0625}}}}]}
///
/// Immutable after load(); thread-safe. PriorityAnswerer is per episode and
/// not thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_FIXED_PRIORITIES_H
#define MLGO_ENV_FIXED_PRIORITIES_H

#include "mlgo/env/problem.h"
#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::env {

/// Per function, per question index, a multiplier of the fallback priority.
using PriorityMultipliers = std::map<std::string, std::map<uint64_t, double>, std::less<>>;

class FixedPriorities {
public:
  /// Reads `file`. kInvalidArgument naming the file and the entry: not
  /// JSON, no `modules` list, an entry without `module` or `functions`, a
  /// module listed twice, a step that is not a decimal index, a multiplier
  /// that is not a finite number >= 0. kNotFound / kIo when unreadable.
  static Result<std::shared_ptr<const FixedPriorities>> load(const std::filesystem::path& file);
  /// From the file's text (`origin` names it in errors).
  static Result<std::shared_ptr<const FixedPriorities>> parse(std::string_view text,
                                                              std::string_view origin);

  /// The module's multipliers; null when the file does not list it.
  const PriorityMultipliers* find(std::string_view module) const;
  size_t modules() const { return modules_.size(); }

private:
  std::map<std::string, PriorityMultipliers, std::less<>> modules_;
};

/// Answers one compile's priority questions from a module's multipliers.
class PriorityAnswerer {
public:
  explicit PriorityAnswerer(const PriorityMultipliers& multipliers)
      : multipliers_(&multipliers) {}

  /// The advice bytes for `observation` (a priority question of the channel
  /// whose header is `header`). The first call binds the priority problem to
  /// `header` (kUnsupported when it does not fit); later calls must pass
  /// the same header.
  Result<std::span<const std::byte>> answer(const protocol::LogHeader& header,
                                            const Observation& observation);
  /// Questions answered so far.
  uint64_t answered() const { return answered_; }

private:
  const PriorityMultipliers* multipliers_;
  std::shared_ptr<const BoundProblem> bound_;
  std::map<std::string, uint64_t, std::less<>> counts_;
  std::vector<std::byte> advice_;
  uint64_t answered_ = 0;
};

} // namespace mlgo::env

#endif // MLGO_ENV_FIXED_PRIORITIES_H
