//===- env/inlining_problem.cc - inlining for size ---------------------------===//
///
/// clang's ML inline advisor in release mode, asked interactively: one
/// context (the module, named ""), one decision per call site considered.
/// `-inliner-interactive-include-default` appends clang's own decision as the
/// feature `inlining_default`; the host uses it as the fallback policy and
/// reports it in the step info, and shows it to the agent only on request.
/// With an IR2Vec vocabulary (ProblemOptions::ir2vecVocabulary) clang also
/// sends `callee_embedding` and `caller_embedding`; bind() checks they came.
///
//===----------------------------------------------------------------------===//
#include "problems_impl.h"

#include "mlgo/ir2vec/vocabulary.h"

namespace mlgo::env::detail {
namespace {

constexpr std::string_view kDefaultFeature = "inlining_default";
constexpr std::string_view kEmbeddingFeatures[] = {"callee_embedding", "caller_embedding"};

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

  std::string defaultDecisionSource() const override {
    return fmt::format("clang-default:{}", kDefaultFeature);
  }

  std::string actionRule() const override { return "0 = do not inline, 1 = inline"; }

private:
  size_t defaultIndex_;
};

// With a vocabulary, clang must have switched on both IR2Vec features, at
// the vocabulary's dimension: a clang that ignores the flags, or reads
// another file than the host embeds with, would otherwise go unnoticed.
Status checkEmbeddingFeatures(const protocol::LogHeader& header, const ProblemOptions& options) {
  for (std::string_view name : kEmbeddingFeatures) {
    auto index = header.featureIndex(name);
    if (!index)
      return makeError(ErrorCode::kUnsupported,
                       "inlining: clang was given the IR2Vec vocabulary {} but its header has no "
                       "'{}' feature; this clang does not support the inliner's IR2Vec features",
                       options.ir2vecVocabulary.string(), name);
    const protocol::TensorSpec& spec = header.features[*index];
    if (!protocol::isFloatingPoint(spec.type()) ||
        (options.ir2vecDimension != 0 && spec.elementCount() != options.ir2vecDimension))
      return makeError(ErrorCode::kUnsupported,
                       "inlining: clang's feature '{}' is {}, expected {} floats (the dimension "
                       "of the IR2Vec vocabulary {})",
                       name, spec.toJson(), options.ir2vecDimension,
                       options.ir2vecVocabulary.string());
  }
  return Status::success();
}

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
    std::vector<std::string> args = {
        "-mllvm",
        "-enable-ml-inliner=release",
        "-mllvm",
        "-inliner-interactive-channel-base=" + channelBase,
        "-mllvm",
        "-inliner-interactive-include-default",
        "-mllvm",
        fmt::format("-ml-advisor-size-increase-threshold={}", options.sizeIncreaseThreshold)};
    if (!options.ir2vecVocabulary.empty())
      for (std::string& arg : ir2vec::inlinerVocabularyFlags(options.ir2vecVocabulary))
        args.push_back(std::move(arg));
    return args;
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
    if (!options.ir2vecVocabulary.empty())
      MLGO_TRY(checkEmbeddingFeatures(header, options));
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
