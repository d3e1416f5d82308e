//===- env/inlining_problem.cc - inlining for size ---------------------------===//
///
/// clang's ML inline advisor in release mode, asked interactively: one
/// context (the module, named ""), one decision per call site considered.
/// `-inliner-interactive-include-default` appends clang's own decision as the
/// feature `inlining_default`; the host uses it as the fallback policy and
/// reports it in the step info, and shows it to the agent only on request.
///
//===----------------------------------------------------------------------===//
#include "problems_impl.h"

namespace mlgo::env::detail {
namespace {

constexpr std::string_view kDefaultFeature = "inlining_default";

bool isInteger(protocol::ElementType type) {
  return !protocol::isFloatingPoint(type);
}

class BoundInlining final : public BoundProblem {
public:
  BoundInlining(protocol::LogHeader header, std::vector<size_t> visible, size_t defaultIndex)
      : BoundProblem(std::move(header), std::move(visible)), defaultIndex_(defaultIndex) {}

  Status validate(const Observation&, const ActionValue& action) const override {
    auto value = integralAction(action);
    if (!value || (*value != 0 && *value != 1))
      return makeError(ErrorCode::kInvalidArgument,
                       "invalid inlining decision {}: the action must be 0 (do not inline) or 1 "
                       "(inline)",
                       formatAction(action));
    return Status::success();
  }

  ActionValue fallback(const Observation& observation) const override {
    return *defaultDecision(observation);
  }

  std::optional<ActionValue> defaultDecision(const Observation& observation) const override {
    const protocol::TensorSpec& spec = header().features[defaultIndex_];
    int64_t value = integerElement(spec, observation.tensors[defaultIndex_], 0);
    return ActionValue(int64_t{value != 0 ? 1 : 0});
  }

  std::string actionRule() const override { return "0 = do not inline, 1 = inline"; }

private:
  size_t defaultIndex_;
};

class InliningProblem final : public Problem {
public:
  std::string_view name() const override { return "inlining"; }
  std::string_view summary() const override {
    return "inlining for size: decide for each call site whether to inline it; score = bytes "
           "of executable sections";
  }
  std::string_view demoCorpusVariant() const override { return "Oz"; }
  ScoreKind scoreKind() const override { return ScoreKind::kTextBytes; }

  std::vector<std::string> interactiveArgs(const std::string& channelBase,
                                           const ProblemOptions& options) const override {
    return {"-mllvm",
            "-enable-ml-inliner=release",
            "-mllvm",
            "-inliner-interactive-channel-base=" + channelBase,
            "-mllvm",
            "-inliner-interactive-include-default",
            "-mllvm",
            fmt::format("-ml-advisor-size-increase-threshold={}", options.sizeIncreaseThreshold)};
  }

  Result<std::shared_ptr<const BoundProblem>> bind(const protocol::LogHeader& header,
                                                   const ProblemOptions& options) const override {
    MLGO_TRY(checkScalarAdvice(name(), header, isInteger, "one integer (0/1)"));
    auto index = header.featureIndex(kDefaultFeature);
    if (!index)
      return makeError(ErrorCode::kUnsupported,
                       "inlining: clang's header has no '{}' feature; this clang does not "
                       "support -inliner-interactive-include-default",
                       kDefaultFeature);
    if (header.features[*index].elementCount() != 1)
      return makeError(ErrorCode::kUnsupported, "inlining: feature '{}' is {}, expected one value",
                       kDefaultFeature, header.features[*index].toJson());
    std::optional<size_t> hidden;
    if (!options.includeDefaultFeature)
      hidden = *index;
    return std::shared_ptr<const BoundProblem>(
        std::make_shared<BoundInlining>(header, allFeaturesExcept(header, hidden), *index));
  }
};

} // namespace

const Problem& inliningProblem() {
  static const InliningProblem kProblem;
  return kProblem;
}

} // namespace mlgo::env::detail
