//===- python/src/convert.cc - C++ values to and from Python --------------===//
#include "convert.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/sampler.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace py = pybind11;

namespace mlgo::python {

/// The code the server gives the same reset/create/close failure.
int codeFor(const Error& error) {
  switch (error.code()) {
  case ErrorCode::kInvalidArgument:
  case ErrorCode::kNotFound: return kInvalidParams;
  case ErrorCode::kBusy: return kBusy;
  case ErrorCode::kInternal: return kInternalError;
  default: return kEpisodeFailed;
  }
}

/// The code the server gives the same step failure.
int stepCodeFor(const Error& error) {
  switch (error.code()) {
  case ErrorCode::kInvalidArgument: return kInvalidAction;
  case ErrorCode::kNotFound: return kUnknownEpisode;
  case ErrorCode::kInternal: return kInternalError;
  default: return kEpisodeFailed;
  }
}

PyObject* errorClass = nullptr;

py::object makeError(int code, const std::string& message) {
  return py::reinterpret_steal<py::object>(
      PyObject_CallFunction(errorClass, "is", code, message.c_str()));
}

void raise(int code, const std::string& message) {
  py::object error = makeError(code, message);
  PyErr_SetObject(errorClass, error.ptr());
  throw py::error_already_set();
}

env::ActionValue toAction(py::handle action) {
  if (PyBool_Check(action.ptr()) || PyLong_Check(action.ptr())) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(action.ptr(), &overflow);
    if (overflow != 0)
      raise(kInvalidAction, "action " + py::str(action).cast<std::string>() +
                                " does not fit in a 64-bit integer");
    return static_cast<int64_t>(value);
  }
  if (PyFloat_Check(action.ptr()))
    return PyFloat_AsDouble(action.ptr());
  raise(kInvalidAction,
        "action must be an int or a float, not " +
            py::str(py::type::handle_of(action).attr("__name__")).cast<std::string>());
}

namespace {
py::object actionObject(const env::ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    return py::int_(*i);
  return py::float_(std::get<double>(action));
}
} // namespace

py::dict stepInfo(const env::StepResult& step, const env::ResetResult* reset,
                  const std::string& defaultActionSource) {
  py::dict info;
  const bool ended = step.terminated || step.truncated;
  if (!ended) {
    info["context"] = step.observation.context;
    info["observation_id"] = step.observation.id;
  }
  if (step.defaultAction) {
    info["default_action"] = actionObject(*step.defaultAction);
    info["default_action_source"] = defaultActionSource;
  }
  if (reset && reset->moduleEmbedding)
    info["module_embedding"] = py::cast(*reset->moduleEmbedding);
  if (!step.summary)
    return info;
  const auto& s = *step.summary;
  info["policy_score"] = s.policyScore;
  info["default_score"] = s.defaultScore;
  info["observations"] = s.observations;
  info["agent_steps"] = s.agentSteps;
  info["fallback_steps"] = s.fallbackSteps;
  info["prefix_steps"] = s.prefixSteps;
  info["channel_opened"] = s.channelOpened;
  info["baseline_cached"] = s.baselineCached;
  info["compile_seconds"] = s.compileSeconds;
  info["compiler_cpu_seconds"] = s.compilerCpuSeconds;
  py::list contexts;
  for (const auto& c : s.contexts) {
    py::dict context;
    context["name"] = c.name;
    context["policy_score"] = c.policy;
    if (c.baseline)
      context["default_score"] = *c.baseline;
    contexts.append(std::move(context));
  }
  info["contexts"] = std::move(contexts);
  return info;
}

namespace {

template <typename T> std::optional<T> option(const py::dict& options, const char* key) {
  if (!options.contains(key) || options[key].is_none())
    return std::nullopt;
  return options[key].cast<T>();
}

} // namespace

env::EnvironmentOptions environmentOptions(const py::dict& options) {
  env::EnvironmentOptions o;
  for (auto item : options) {
    static const char* const known[] = {
        "problem", "corpus", "clang", "cache_dir", "disk_cache", "jobs", "max_episodes",
        "compile_timeout", "max_observations", "temp_dir", "ir2vec_vocab", "module_embeddings",
        "include_default_feature", "sampler", "seed", "delete_flags", "replace_flags", "add_flags",
        "full_compile"};
    auto key = item.first.cast<std::string>();
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      raise(kInvalidParams, "unknown environment option '" + key + "'");
  }
  o.problem = option<std::string>(options, "problem").value_or("inlining");
  o.corpus = option<std::string>(options, "corpus").value_or("");
  o.clang = option<std::string>(options, "clang").value_or(MLGO_DEFAULT_CLANG);
  o.cacheDir = option<std::string>(options, "cache_dir").value_or("");
  o.useDiskCache = option<bool>(options, "disk_cache").value_or(true);
  o.fullCompile = option<bool>(options, "full_compile").value_or(false);
  o.jobs = option<unsigned>(options, "jobs").value_or(0);
  o.maxEpisodes = option<size_t>(options, "max_episodes").value_or(o.maxEpisodes);
  if (auto seconds = option<double>(options, "compile_timeout")) {
    if (!(*seconds > 0) || !std::isfinite(*seconds))
      raise(kInvalidParams, "compile_timeout must be a positive number of seconds");
    o.compileTimeout =
        std::chrono::milliseconds(static_cast<int64_t>(std::ceil(*seconds * 1000)));
  }
  o.maxObservations = option<uint64_t>(options, "max_observations").value_or(o.maxObservations);
  o.tempDir = option<std::string>(options, "temp_dir").value_or("");
  if (auto vocab = option<std::string>(options, "ir2vec_vocab"))
    o.ir2vecVocabulary = *vocab == "default" ? ir2vec::defaultVocabularyPath()
                                             : std::filesystem::path(*vocab);
  o.moduleEmbeddings = option<bool>(options, "module_embeddings").value_or(true);
  o.problemOptions.includeDefaultFeature =
      option<bool>(options, "include_default_feature").value_or(false);
  auto kind = corpus::parseSamplerKind(option<std::string>(options, "sampler").value_or("round-robin"));
  if (!kind.ok())
    raise(kInvalidParams, "sampler: " + kind.error().message());
  o.sampler.kind = *kind;
  o.sampler.seed = option<uint64_t>(options, "seed").value_or(0);
  using Strings = std::vector<std::string>;
  auto rules = corpus::parseFlagRules(option<Strings>(options, "delete_flags").value_or(Strings{}),
                                      option<Strings>(options, "replace_flags").value_or(Strings{}),
                                      option<Strings>(options, "add_flags").value_or(Strings{}));
  if (!rules.ok())
    raise(kInvalidParams, rules.error().message());
  o.flagRules = std::move(*rules);
  return o;
}

py::dict describeDict(const env::EnvironmentDescription& d) {
  auto spec = [](const protocol::TensorSpec& s) {
    py::dict out;
    out["name"] = s.name();
    out["type"] = std::string(protocol::spelling(s.type()));
    out["port"] = s.port();
    out["shape"] = py::cast(s.shape());
    return out;
  };
  py::dict out;
  out["problem"] = d.problem;
  out["summary"] = d.summary;
  py::list specs;
  for (const auto& s : d.observationSpecs)
    specs.append(spec(s));
  out["observation_spec"] = specs;
  out["action_spec"] = d.actionSpec ? py::object(spec(*d.actionSpec)) : py::object(py::none());
  out["action_rule"] = d.actionRule;
  out["default_action_source"] = d.defaultActionSource.empty()
                                     ? py::object(py::none())
                                     : py::object(py::str(d.defaultActionSource));
  out["reward"] = d.rewardDefinition;
  out["corpus"] = py::dict(py::arg("root") = d.corpusRoot.string(),
                           py::arg("modules") = d.corpusModules);
  out["clang"] = py::dict(py::arg("path") = d.clangPath.string(),
                          py::arg("version") = d.clangVersion);
  out["jobs"] = d.jobs;
  if (d.ir2vecVocabulary.empty())
    out["ir2vec"] = py::none();
  else
    out["ir2vec"] = py::dict(py::arg("vocabulary") = d.ir2vecVocabulary.string(),
                             py::arg("dimension") = d.ir2vecDimension);
  return out;
}

} // namespace mlgo::python
