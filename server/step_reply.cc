//===- server/step_reply.cc - the JSON of a step or reset reply -----------===//
#include "step_reply.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace mlgo::server {

using protocol::TensorEncoding;

namespace {

/// True when `text` is printable ASCII without '"' or '\\': JSON needs it
/// neither escaped nor checked for UTF-8, so it can be copied as it is.
bool plainJsonText(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
      return false;
  return true;
}

void writeAction(llvm::json::OStream& json, const env::ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    json.value(*i);
  else
    json.value(std::get<double>(action));
}

/// The step's observation cut back into its tensors (spec order).
std::vector<std::span<const std::byte>> visibleTensors(const env::StepResult& step,
                                                       const env::EnvironmentDescription& d) {
  std::vector<std::span<const std::byte>> tensors;
  tensors.reserve(d.observationSpecs.size());
  std::span<const std::byte> bytes(step.observation.bytes);
  for (size_t i = 0; i < d.observationSpecs.size(); ++i) {
    size_t at = d.observationOffsets[i], size = d.observationSpecs[i].byteSize();
    if (at + size <= bytes.size())
      tensors.push_back(bytes.subspan(at, size));
  }
  return tensors;
}

} // namespace

void appendObservationFrame(std::string& out, const env::StepResult& step,
                            const env::EnvironmentDescription& d) {
  // The visible tensors sit one after another from the start of the bytes
  // (the offsets are their running sizes): one copy, no cutting.
  const auto& bytes = step.observation.bytes;
  size_t end = 0;
  bool laidOut = true;
  for (size_t i = 0; i < d.observationSpecs.size() && laidOut; ++i) {
    size_t size = d.observationSpecs[i].byteSize();
    laidOut = d.observationOffsets[i] == end && end + size <= bytes.size();
    end += laidOut ? size : 0;
  }
  if (laidOut && end == bytes.size()) {
    out.append(reinterpret_cast<const char*>(bytes.data()), end);
    return;
  }
  for (std::span<const std::byte> t : visibleTensors(step, d)) // Not laid out so: as cut.
    out.append(reinterpret_cast<const char*>(t.data()), t.size());
}

bool appendIntermediateStepJson(std::string& out, const env::StepResult& step,
                                const env::EnvironmentDescription& d,
                                const protocol::ObservationJsonWriter& writer,
                                TensorEncoding encoding) {
  const auto* action = step.defaultAction ? std::get_if<int64_t>(&*step.defaultAction) : nullptr;
  if (step.terminated || step.truncated || step.summary || step.reward != 0 ||
      std::signbit(step.reward) || (step.defaultAction && !action) ||
      !plainJsonText(step.observation.context) || !plainJsonText(d.defaultActionSource))
    return false;
  auto tensors = visibleTensors(step, d);
  // One allocation for the reply, its frame and its line's end.
  if (encoding == TensorEncoding::kBase64)
    out.reserve(out.size() + writer.base64Size(tensors) + step.observation.context.size() +
                d.defaultActionSource.size() + 192);
  else if (encoding == TensorEncoding::kBinary)
    out.reserve(out.size() + step.observation.bytes.size() + step.observation.context.size() +
                d.defaultActionSource.size() + 192);
  out += "{\"observation\":";
  writer.append(out, tensors, encoding);
  out += ",\"reward\":0,\"terminated\":false,\"truncated\":false,\"info\":{\"context\":\"";
  out += step.observation.context;
  out += "\",\"observation_id\":";
  out += std::to_string(step.observation.id);
  if (action) {
    out += ",\"default_action\":";
    out += std::to_string(*action);
    out += ",\"default_action_source\":\"";
    out += d.defaultActionSource;
    out += '"';
  }
  out += "}}";
  return true;
}

std::string generalStepJson(const env::StepResult& step, const env::EnvironmentDescription& d,
                            const protocol::LogHeader& visible, TensorEncoding encoding,
                            const env::ResetResult* reset) {
  std::string out;
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  const bool ended = step.terminated || step.truncated;
  json.object([&] {
    if (reset) {
      json.attribute("episode", static_cast<int64_t>(reset->episode));
      json.attribute("module", reset->module);
    }
    json.attributeBegin("observation");
    if (ended) {
      json.value(nullptr);
    } else {
      auto tensors = visibleTensors(step, d);
      json.rawValue([&](llvm::raw_ostream& os) {
        std::string obs;
        protocol::appendObservationJson(obs, visible, tensors, encoding);
        os << obs;
      });
    }
    json.attributeEnd();
    json.attribute("reward", step.reward);
    json.attribute("terminated", step.terminated);
    json.attribute("truncated", step.truncated);
    json.attributeObject("info", [&] {
      if (!ended) {
        json.attribute("context", step.observation.context);
        json.attribute("observation_id", step.observation.id);
      }
      if (step.defaultAction) {
        json.attributeBegin("default_action");
        writeAction(json, *step.defaultAction);
        json.attributeEnd();
        json.attribute("default_action_source", d.defaultActionSource);
      }
      if (reset && reset->moduleEmbedding)
        json.attributeArray("module_embedding", [&] {
          for (double value : *reset->moduleEmbedding)
            json.value(value);
        });
      if (!step.summary)
        return;
      const auto& s = *step.summary;
      json.attribute("policy_score", s.policyScore);
      json.attribute("default_score", s.defaultScore);
      json.attribute("observations", static_cast<int64_t>(s.observations));
      json.attribute("agent_steps", static_cast<int64_t>(s.agentSteps));
      json.attribute("fallback_steps", static_cast<int64_t>(s.fallbackSteps));
      json.attribute("prefix_steps", static_cast<int64_t>(s.prefixSteps));
      json.attribute("channel_opened", s.channelOpened);
      json.attribute("baseline_cached", s.baselineCached);
      json.attribute("compile_seconds", s.compileSeconds);
      json.attribute("compiler_cpu_seconds", s.compilerCpuSeconds);
      json.attributeArray("contexts", [&] {
        for (const auto& c : s.contexts)
          json.object([&] {
            json.attribute("name", c.name);
            json.attribute("policy_score", c.policy);
            if (c.baseline)
              json.attribute("default_score", *c.baseline);
          });
      });
    });
  });
  return out;
}

} // namespace mlgo::server
