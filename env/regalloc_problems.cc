//===- env/regalloc_problems.cc - register allocation problems ---------------===//
///
/// Two of the greedy register allocator's decisions, asked per machine
/// function (the context is the function's name):
///  - regalloc (eviction): which interfering live range to evict. `mask[i]`
///    says whether candidate i may be chosen; the last position is the live
///    range being allocated itself (choosing it evicts nothing). clang does
///    not check the answer: a masked index crashes it, an out-of-range one
///    makes it ask forever. So every action is checked against the mask.
///  - regalloc-priority: the priority of a live range in the allocation
///    queue, as a float clang truncates to an unsigned integer.
/// Stock clang does not expose its default decision for either. For
/// eviction the host emulates it (mlgo/policy/default_eviction.h) unless the
/// clang offers `-regalloc-evict-interactive-include-default`; the default
/// decision is also the fallback that finishes truncated episodes.
///
//===----------------------------------------------------------------------===//
#include "problems_impl.h"

#include "mlgo/policy/default_eviction.h"

#include <algorithm>
#include <cmath>

namespace mlgo::env::detail {
namespace {

constexpr std::string_view kMaskFeature = "mask";
constexpr std::string_view kIncludeDefaultFlag = "-regalloc-evict-interactive-include-default";

/// clang's own default decision, when it sends it: the one feature whose
/// name contains "default".
std::optional<size_t> clangDefaultFeature(const protocol::LogHeader& header) {
  for (size_t i = 0; i < header.features.size(); ++i)
    if (header.features[i].name().find("default") != std::string::npos)
      return i;
  return std::nullopt;
}

bool isInteger(protocol::ElementType type) {
  return !protocol::isFloatingPoint(type);
}
bool isFloating(protocol::ElementType type) {
  return protocol::isFloatingPoint(type);
}

class BoundEviction final : public BoundProblem {
public:
  /// `clangDefault`: the index of clang's default-decision feature (hidden
  /// unless `showDefault`); else `emulation` computes it.
  BoundEviction(protocol::LogHeader header, size_t maskIndex, std::optional<size_t> clangDefault,
                bool showDefault, std::optional<policy::DefaultEvictionPolicy> emulation)
      : BoundProblem(header,
                     allFeaturesExcept(header, showDefault ? std::nullopt : clangDefault)),
        maskIndex_(maskIndex), candidates_(header.features[maskIndex].elementCount()),
        clangDefault_(clangDefault), emulation_(std::move(emulation)) {}

  Status validate(const Observation& observation, const ActionValue& action) const override {
    auto value = integralAction(action);
    if (!value || *value < 0 || static_cast<uint64_t>(*value) >= candidates_)
      return makeError(ErrorCode::kInvalidArgument,
                       "invalid eviction choice {}: the action must be an index in [0, {}) with "
                       "mask[index] == 1 (valid now: {})",
                       formatAction(action), candidates_, validList(observation));
    if (!allowed(observation, static_cast<size_t>(*value)))
      return makeError(ErrorCode::kInvalidArgument,
                       "invalid eviction choice {}: mask[{}] is 0 (valid now: {})",
                       formatAction(action), *value, validList(observation));
    return Status::success();
  }

  std::optional<ActionValue> defaultDecision(const Observation& observation) const override {
    if (clangDefault_) {
      int64_t value = integerElement(header().features[*clangDefault_],
                                     observation.tensors[*clangDefault_], 0);
      // Never hand on an index clang would crash on.
      if (value >= 0 && static_cast<uint64_t>(value) < candidates_ &&
          allowed(observation, static_cast<size_t>(value)))
        return ActionValue(value);
      return std::nullopt;
    }
    if (emulation_)
      return ActionValue(emulation_->choose(observation.tensors));
    return std::nullopt;
  }

  std::string defaultDecisionSource() const override {
    if (clangDefault_)
      return fmt::format("clang-default:{}", header().features[*clangDefault_].name());
    if (emulation_)
      return fmt::format("{}:default-eviction", policy::kDefaultEvictionPolicyName);
    return {};
  }

  /// The default decision when there is one, else evict nothing when
  /// allowed, else the first valid candidate.
  ActionValue fallback(const Observation& observation) const override {
    return fallbackKnowingDefault(observation, defaultDecision(observation));
  }

  ActionValue fallbackKnowingDefault(const Observation& observation,
                                     const std::optional<ActionValue>& decision) const override {
    if (decision)
      return *decision;
    size_t self = candidates_ - 1;
    if (allowed(observation, self))
      return ActionValue(static_cast<int64_t>(self));
    for (size_t i = 0; i < candidates_; ++i)
      if (allowed(observation, i))
        return ActionValue(static_cast<int64_t>(i));
    return ActionValue(static_cast<int64_t>(self));
  }

  std::string actionRule() const override {
    return fmt::format("an index i in [0, {}) with mask[i] == 1; {} = evict nothing", candidates_,
                       candidates_ - 1);
  }

private:
  bool allowed(const Observation& observation, size_t i) const {
    return integerElement(header().features[maskIndex_], observation.tensors[maskIndex_], i) == 1;
  }

  std::string validList(const Observation& observation) const {
    std::string list;
    for (size_t i = 0; i < candidates_; ++i) {
      if (allowed(observation, i))
        list += fmt::format("{}{}", list.empty() ? "" : ", ", i);
    }
    return list.empty() ? "none" : list;
  }

  size_t maskIndex_;
  size_t candidates_;
  std::optional<size_t> clangDefault_;
  std::optional<policy::DefaultEvictionPolicy> emulation_;
};

/// True when `value`, rounded to the advice's type, truncates to an unsigned
/// 32-bit integer without overflow: finite and in [0, 2^32).
bool validPriority(protocol::ElementType type, double value) {
  if (!std::isfinite(value) || value < 0)
    return false;
  double onWire = type == protocol::ElementType::kFloat
                      ? static_cast<double>(static_cast<float>(value))
                      : value;
  return onWire < std::ldexp(1.0, 32);
}

/// What a priority fallback reads.
struct PriorityFeatures {
  std::optional<size_t> size, stage, weight;
};

class BoundPriority final : public BoundProblem {
public:
  BoundPriority(protocol::LogHeader header, std::string fallback, double constant,
                PriorityFeatures features)
      : BoundProblem(header, allFeaturesExcept(header, std::nullopt)),
        fallback_(std::move(fallback)), constant_(constant), features_(features) {}

  Status validate(const Observation&, const ActionValue& action) const override {
    if (!validPriority(actionSpec().type(), numericAction(action)))
      return makeError(ErrorCode::kInvalidArgument,
                       "invalid priority {}: the action must be a finite number in [0, "
                       "4294967296) once rounded to {} (clang truncates it to a 32-bit "
                       "unsigned integer)",
                       formatAction(action), protocol::spelling(actionSpec().type()));
    return Status::success();
  }

  ActionValue fallback(const Observation& observation) const override {
    constexpr double kLimit = 16777215; // 2^24 - 1: exact in float32.
    auto clamp = [&](double v) { return std::isfinite(v) ? std::clamp(v, 0.0, kLimit) : 0.0; };
    auto read = [&](std::optional<size_t> index) {
      return protocol::elementAsDouble(header().features[*index].type(),
                                       observation.tensors[*index].data(), 0);
    };
    if (fallback_ == "li_size")
      return ActionValue(clamp(read(features_.size)));
    if (fallback_ == "weight")
      return ActionValue(clamp(read(features_.weight) * 1000));
    bool deferred = fallback_ != "constant" && read(features_.stage) == kDeferredStage;
    if (fallback_ == "stage")
      return ActionValue(deferred ? 0.0 : 1.0);
    if (fallback_ == "stage-then-size")
      return ActionValue(std::floor(clamp(read(features_.size)) / 2) +
                         (deferred ? 0.0 : 8388608.0));
    return ActionValue(constant_);
  }

  std::string actionRule() const override {
    return "a finite priority in [0, 2^32), truncated to an unsigned integer; higher is "
           "allocated first";
  }

private:
  /// RS_Split: a range clang could not assign and deferred.
  static constexpr double kDeferredStage = 2;
  std::string fallback_;
  double constant_;
  PriorityFeatures features_;
};

class EvictionProblem final : public Problem {
public:
  std::string_view name() const override { return "regalloc"; }
  std::string_view summary() const override {
    return "register allocation eviction: choose which live range the greedy allocator evicts; "
           "score = 4*reloads + spills + 0.2*copies";
  }
  std::string_view demoCorpusVariant() const override { return "O2"; }
  ScoreKind scoreKind() const override { return ScoreKind::kRegallocCost; }
  bool decidesInCodegen() const override { return true; }

  std::vector<std::string> interactiveArgs(const std::string& channelBase,
                                           const ProblemOptions& options) const override {
    std::vector<std::string> args = {"-mllvm", "-regalloc-enable-advisor=release", "-mllvm",
                                     "-regalloc-evict-interactive-channel-base=" + channelBase};
    if (options.regallocClangDefault) {
      args.push_back("-mllvm");
      args.emplace_back(kIncludeDefaultFlag);
    }
    return args;
  }

  Result<std::shared_ptr<const BoundProblem>> bind(const protocol::LogHeader& header,
                                                   const ProblemOptions& options) const override {
    MLGO_TRY(checkScalarAdvice(name(), header, isInteger, "one integer (a candidate index)"));
    auto mask = header.featureIndex(kMaskFeature);
    if (!mask)
      return makeError(ErrorCode::kUnsupported, "regalloc: clang's header has no '{}' feature",
                       kMaskFeature);
    if (header.features[*mask].elementCount() < 1 ||
        protocol::isFloatingPoint(header.features[*mask].type()))
      return makeError(ErrorCode::kUnsupported,
                       "regalloc: feature '{}' is {}, expected a non-empty integer tensor",
                       kMaskFeature, header.features[*mask].toJson());
    std::optional<size_t> clangDefault;
    if (options.regallocClangDefault) {
      clangDefault = clangDefaultFeature(header);
      if (!clangDefault)
        return makeError(ErrorCode::kUnsupported,
                         "regalloc: clang was given {} but its header has no default-decision "
                         "feature (no feature name contains 'default')",
                         kIncludeDefaultFlag);
    }
    // Without the emulation's features there is no default decision; the
    // fallback then evicts nothing.
    std::optional<policy::DefaultEvictionPolicy> emulation;
    if (auto created = policy::DefaultEvictionPolicy::create(header); created.ok())
      emulation.emplace(std::move(*created));
    return std::shared_ptr<const BoundProblem>(std::make_shared<BoundEviction>(
        header, *mask, clangDefault, options.includeDefaultFeature, std::move(emulation)));
  }
};

class PriorityProblem final : public Problem {
public:
  std::string_view name() const override { return "regalloc-priority"; }
  std::string_view summary() const override {
    return "register allocation priority: give each live range its place in the greedy "
           "allocator's queue; score = 4*reloads + spills + 0.2*copies";
  }
  std::string_view demoCorpusVariant() const override { return "O2"; }
  ScoreKind scoreKind() const override { return ScoreKind::kRegallocCost; }
  bool decidesInCodegen() const override { return true; }

  std::vector<std::string> interactiveArgs(const std::string& channelBase,
                                           const ProblemOptions&) const override {
    return {"-mllvm", "-regalloc-enable-priority-advisor=release", "-mllvm",
            "-regalloc-priority-interactive-channel-base=" + channelBase};
  }

  Result<std::shared_ptr<const BoundProblem>> bind(const protocol::LogHeader& header,
                                                   const ProblemOptions& options) const override {
    MLGO_TRY(checkScalarAdvice(name(), header, isFloating, "one float (the priority)"));
    if (!validPriority(header.advice->type(), options.constantPriority))
      return makeError(ErrorCode::kInvalidArgument,
                       "regalloc-priority: the fallback priority {} is not in [0, 2^32)",
                       options.constantPriority);
    PriorityFeatures features{header.featureIndex("li_size"), header.featureIndex("stage"),
                              header.featureIndex("weight")};
    const std::string& fallback = options.priorityFallback;
    bool known = false;
    for (std::string_view name : kPriorityFallbacks)
      known = known || name == fallback;
    if (!known)
      return makeError(ErrorCode::kInvalidArgument,
                       "regalloc-priority: unknown fallback '{}' (use constant, li_size, weight, "
                       "stage or stage-then-size)",
                       fallback);
    std::optional<size_t> needed = fallback == "li_size"           ? features.size
                                   : fallback == "weight"          ? features.weight
                                   : fallback == "stage"           ? features.stage
                                   : fallback == "stage-then-size" ? features.stage
                                                                   : std::optional<size_t>(0);
    if (fallback == "stage-then-size" && !features.size)
      needed.reset();
    if (!needed)
      return makeError(ErrorCode::kUnsupported,
                       "regalloc-priority: the '{}' fallback needs a feature clang's header "
                       "lacks (li_size, stage, weight)",
                       fallback);
    return std::shared_ptr<const BoundProblem>(std::make_shared<BoundPriority>(
        header, fallback, options.constantPriority, features));
  }
};

} // namespace

const Problem& evictionProblem() {
  static const EvictionProblem kProblem;
  return kProblem;
}

const Problem& priorityProblem() {
  static const PriorityProblem kProblem;
  return kProblem;
}

} // namespace mlgo::env::detail
