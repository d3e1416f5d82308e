//===- trace/module_verifier.cc - replaying one module of a trace -----------===//
#include "module_verifier.h"

#include "action_codec.h"
#include "context_rewards.h"
#include "mlgo/trace/trace_header.h"
#include "module_tracer.h"
#include "observation_diff.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace mlgo::trace {
namespace {

/// Checks each request clang makes against the recording.
class Replayer {
public:
  Replayer(const protocol::LogHeader& header, const RecordedModule& recorded)
      : header_(header), recorded_(recorded),
        specs_(header.features.begin(), header.features.end() - 1) {}

  Result<env::ActionValue> decide(const env::StepResult& step) {
    const env::AgentObservation& now = step.observation;
    std::string context = contextName(recorded_.module, now.context);
    Divergence d = base(context, now.id);
    if (next_ >= recorded_.observations.size()) {
      d.what = fmt::format("clang asks for one more decision than the trace's {} for this module",
                           recorded_.observations.size());
      return fail(std::move(d));
    }
    const RecordedObservation& rec = recorded_.observations[next_];
    if (rec.context != context || rec.id != now.id) {
      d.what = "clang asks in another context or order than the trace";
      d.expected = fmt::format("context {} observation {}", rec.context, rec.id);
      d.actual = fmt::format("context {} observation {}", context, now.id);
      return fail(std::move(d));
    }
    if (auto diff = firstDifference(specs_, rec.features, now.bytes)) {
      d.what = "the observation differs";
      d.feature = diff->feature;
      d.element = diff->element;
      d.expected = diff->expected;
      d.actual = diff->actual;
      return fail(std::move(d));
    }
    auto action = decodeAction(header_.features.back(), rec.action);
    if (!action.ok())
      return action.error();
    ++next_;
    return *action;
  }

  /// After the episode: no recorded observation may be left over.
  std::optional<Divergence> leftOver() const {
    if (next_ == recorded_.observations.size())
      return std::nullopt;
    const RecordedObservation& rec = recorded_.observations[next_];
    Divergence d = base(rec.context, rec.id);
    d.what = fmt::format("clang finished after {} decisions, the trace has {} for this module",
                         next_, recorded_.observations.size());
    return d;
  }

  /// The functions in order of first decision.
  std::vector<std::string> functions() const {
    std::vector<std::string> names;
    for (const RecordedObservation& rec : recorded_.observations)
      if (std::find(names.begin(), names.end(), rec.function) == names.end())
        names.push_back(rec.function);
    return names;
  }

  std::optional<Divergence> divergence;

private:
  Divergence base(const std::string& context, int64_t id) const {
    Divergence d;
    d.module = recorded_.module;
    d.context = context;
    d.observation = id;
    return d;
  }
  Error fail(Divergence d) {
    divergence = std::move(d);
    return makeError(ErrorCode::kInvalidArgument, "divergence");
  }

  const protocol::LogHeader& header_;
  const RecordedModule& recorded_;
  std::vector<protocol::TensorSpec> specs_;
  size_t next_ = 0;
};

/// Compares each recorded outcome with the recomputed rewards.
std::variant<uint64_t, Divergence> checkOutcomes(const protocol::LogHeader& header,
                                                 const RecordedModule& recorded,
                                                 const std::vector<ContextResult>& rows) {
  if (!header.score)
    return uint64_t{0};
  std::unordered_map<std::string, size_t> last;
  for (size_t i = 0; i < recorded.observations.size(); ++i)
    last[recorded.observations[i].context] = i;
  uint64_t checked = 0;
  for (size_t i = 0; i < recorded.observations.size(); ++i) {
    const RecordedObservation& rec = recorded.observations[i];
    Divergence d{recorded.module, rec.context, rec.id, header.score->name(), 0, "", "", ""};
    if (!rec.outcome) {
      d.what = "the trace has no outcome for this observation";
      return d;
    }
    float expected = 0.0F;
    if (last[rec.context] == i) {
      auto row = std::find_if(rows.begin(), rows.end(), [&](const ContextResult& r) {
        return r.inTrace && r.context == rec.context;
      });
      if (row == rows.end()) {
        d.what = "the replay has no reward for this context";
        return d;
      }
      expected = static_cast<float>(row->reward);
    }
    const auto& bytes = *rec.outcome;
    float recorded32 = 0;
    if (header.score->type() != protocol::ElementType::kFloat || bytes.size() < sizeof(float)) {
      d.what = fmt::format("the score is {}, not a float", header.score->toJson());
      return d;
    }
    std::memcpy(&recorded32, bytes.data(), sizeof(float));
    if (std::memcmp(&recorded32, &expected, sizeof(float)) != 0) {
      d.what = last[rec.context] == i ? "the context's reward differs"
                                      : "an outcome before the context's last observation is "
                                        "not 0";
      d.expected = fmt::format("{}", recorded32);
      d.actual = fmt::format("{}", expected);
      return d;
    }
    ++checked;
  }
  return checked;
}

} // namespace

ModuleVerdict verifyModule(env::Environment& environment, const protocol::LogHeader& header,
                           const RecordedModule& recorded) {
  Replayer replayer(header, recorded);
  auto decide = [&](const env::StepResult& step) { return replayer.decide(step); };
  auto last = playEpisode(environment, recorded.module, decide, nullptr);
  if (replayer.divergence)
    return *replayer.divergence;
  if (!last.ok())
    return last.error();
  if (auto d = replayer.leftOver())
    return *d;
  std::vector<std::string> functions = replayer.functions();
  std::vector<ContextResult> rows =
      contextResults(environment.problem(), recorded.module, *last->summary, functions);
  auto outcomes = checkOutcomes(header, recorded, rows);
  if (auto* d = std::get_if<Divergence>(&outcomes))
    return *d;
  return ModuleVerified{recorded.observations.size(), std::get<uint64_t>(outcomes),
                        last->summary->defaultScore, last->summary->policyScore};
}

} // namespace mlgo::trace
