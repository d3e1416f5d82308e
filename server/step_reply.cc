//===- server/step_reply.cc - the JSON of a step or reset reply -----------===//
#include "step_reply.h"

#include "mlgo/env/step_info.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

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

/// Writes the info fields (env/step_info.h) with llvm::json.
struct JsonInfoWriter {
  llvm::json::OStream& json;

  void field(std::string_view key, std::string_view text) {
    json.attribute(key, llvm::StringRef(text));
  }
  void field(std::string_view key, int64_t number) { json.attribute(key, number); }
  void field(std::string_view key, uint64_t number) {
    json.attribute(key, static_cast<int64_t>(number));
  }
  void field(std::string_view key, double number) { json.attribute(key, number); }
  void field(std::string_view key, bool flag) { json.attribute(key, flag); }
  void field(std::string_view key, const env::ActionValue& action) {
    if (const auto* i = std::get_if<int64_t>(&action))
      json.attribute(key, *i);
    else
      json.attribute(key, std::get<double>(action));
  }
  void field(std::string_view key, std::span<const double> numbers) {
    json.attributeArray(key, [&] {
      for (double number : numbers)
        json.value(number);
    });
  }
  void field(std::string_view key, std::span<const env::ContextScore> contexts) {
    json.attributeArray(key, [&] {
      for (const auto& c : contexts)
        json.object([&] { env::visitContextScore(c, *this); });
    });
  }
};

/// Writes the info fields by appending to a string, as JsonInfoWriter
/// would write them, for text that plainJsonText accepts (the caller
/// checks it: nothing is escaped here).
struct StraightInfoWriter {
  std::string& out;
  bool first = true;

  void key(std::string_view name) {
    out += first ? "\"" : ",\"";
    first = false;
    out += name;
    out += "\":";
  }
  void number(double value) { // llvm::json's spelling of a double
    char text[32];
    int n = std::snprintf(text, sizeof text, "%.*g", std::numeric_limits<double>::max_digits10,
                          value);
    out.append(text, static_cast<size_t>(n));
  }
  void field(std::string_view name, std::string_view text) {
    key(name);
    out += '"';
    out += text;
    out += '"';
  }
  void field(std::string_view name, int64_t value) {
    key(name);
    out += std::to_string(value);
  }
  void field(std::string_view name, uint64_t value) { field(name, static_cast<int64_t>(value)); }
  void field(std::string_view name, double value) {
    key(name);
    number(value);
  }
  void field(std::string_view name, bool flag) {
    key(name);
    out += flag ? "true" : "false";
  }
  void field(std::string_view name, const env::ActionValue& action) {
    if (const auto* i = std::get_if<int64_t>(&action))
      field(name, *i);
    else
      field(name, std::get<double>(action));
  }
  void field(std::string_view name, std::span<const double> values) {
    key(name);
    out += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0)
        out += ',';
      number(values[i]);
    }
    out += ']';
  }
  void field(std::string_view name, std::span<const env::ContextScore> contexts) {
    key(name);
    out += '[';
    for (size_t i = 0; i < contexts.size(); ++i) {
      out += i > 0 ? ",{" : "{";
      StraightInfoWriter inner{out};
      env::visitContextScore(contexts[i], inner);
      out += '}';
    }
    out += ']';
  }
};

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

void appendStepInfoFields(std::string& out, const env::StepResult& step,
                          const env::ResetResult* reset, std::string_view defaultActionSource) {
  StraightInfoWriter info{out};
  env::visitStepInfo(step, reset, defaultActionSource, info);
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
  out += ",\"reward\":0,\"terminated\":false,\"truncated\":false,\"info\":{";
  appendStepInfoFields(out, step, nullptr, d.defaultActionSource);
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
      JsonInfoWriter info{json};
      env::visitStepInfo(step, reset, d.defaultActionSource, info);
    });
  });
  return out;
}

} // namespace mlgo::server
