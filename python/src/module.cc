//===- python/src/module.cc - the _core extension of mlgo_env -------------===//
///
/// \file
/// `mlgo_env._core`: the bindings behind mlgo_env's in-process backend
/// (python/mlgo_env/backend.py is its only user). Calls return exactly what
/// the server's JSON would decode to (same info keys, same numbers), with
/// observations as numpy arrays (copies, see tensors.h).
///
/// Errors raise `_core.Error(code, message)` with the server's stable
/// JSON-RPC code for the same failure (README, "Error codes"); batch calls
/// put an Error instance in the failing slot instead of raising. Every wait
/// releases the GIL and checks for signals every 50 ms (core_environment.h):
/// Ctrl-C kills the compilers of the call and raises KeyboardInterrupt.
///
//===----------------------------------------------------------------------===//
#include "core_environment.h"
#include "tensors.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/sampler.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <pybind11/stl.h>

#include <cmath>
#include <optional>

namespace py = pybind11;

namespace mlgo::python {
namespace {

// The protocol's stable codes (protocol/rpc.h), as Python sees them.
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kInvalidAction = -32001;
constexpr int kUnknownEpisode = -32002;
constexpr int kEpisodeFailed = -32003;
constexpr int kBusy = -32004;

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

PyObject* errorClass = nullptr; // _core.Error, owned by the module.

py::object makeError(int code, const std::string& message) {
  return py::reinterpret_steal<py::object>(
      PyObject_CallFunction(errorClass, "is", code, message.c_str()));
}

[[noreturn]] void raise(int code, const std::string& message) {
  py::object error = makeError(code, message);
  PyErr_SetObject(errorClass, error.ptr());
  throw py::error_already_set();
}

/// Ctrl-C detection for the waits: `check()` runs with the GIL released and
/// briefly takes it; a pending exception is kept and re-raised by rethrow().
class SignalWatch {
public:
  StopCheck check() {
    return [this] {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0)
        return false;
      PyErr_Fetch(&type_, &value_, &traceback_);
      return true;
    };
  }
  /// With the GIL held, after the wait: raises what check() caught.
  void rethrow() {
    if (!type_)
      return;
    PyErr_Restore(type_, value_, traceback_);
    type_ = value_ = traceback_ = nullptr;
    throw py::error_already_set();
  }

private:
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

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

py::object actionObject(const env::ActionValue& action) {
  if (const auto* i = std::get_if<int64_t>(&action))
    return py::int_(*i);
  return py::float_(std::get<double>(action));
}

py::dict stepInfo(const env::StepResult& step, const env::ResetResult* reset) {
  py::dict info;
  const bool ended = step.terminated || step.truncated;
  if (!ended) {
    info["context"] = step.observation.context;
    info["observation_id"] = step.observation.id;
  }
  if (step.defaultAction)
    info["default_action"] = actionObject(*step.defaultAction);
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

/// The Python object behind mlgo_env's in-process backend.
class Core {
public:
  explicit Core(const py::dict& options);

  py::dict describe() const;
  py::list modules() const;
  py::list reset(const py::list& requests);
  py::list step(const py::list& episodes, const py::list& actions);
  void closeEpisode(env::EpisodeId episode);
  size_t openEpisodes() const { return core().openEpisodes(); }
  std::optional<int64_t> compilerPid(env::EpisodeId episode) const {
    auto pid = core().environment().compilerPid(episode);
    return pid ? std::optional<int64_t>(*pid) : std::nullopt;
  }
  /// Kills every compiler and frees the environment; later calls fail.
  void shutdown() {
    py::gil_scoped_release release;
    core_.reset();
  }
  bool closed() const { return !core_; }

private:
  CoreEnvironment& core() const {
    if (!core_)
      raise(kInternalError, "the environment is closed");
    return *core_;
  }
  py::tuple stepTuple(const env::StepResult& step, const env::ResetResult* reset) const {
    const bool ended = step.terminated || step.truncated;
    py::object observation =
        ended ? py::object(py::none()) : py::object(layout_->toDict(step.observation.bytes));
    return py::make_tuple(observation, step.reward, step.terminated, step.truncated,
                          stepInfo(step, reset));
  }

  std::unique_ptr<CoreEnvironment> core_;
  std::optional<ObservationLayout> layout_;
};

template <typename T> std::optional<T> option(const py::dict& options, const char* key) {
  if (!options.contains(key) || options[key].is_none())
    return std::nullopt;
  return options[key].cast<T>();
}

env::EnvironmentOptions environmentOptions(const py::dict& options) {
  env::EnvironmentOptions o;
  for (auto item : options) {
    static const char* const known[] = {
        "problem", "corpus", "clang", "cache_dir", "disk_cache", "jobs", "max_episodes",
        "compile_timeout", "max_observations", "temp_dir", "ir2vec_vocab", "module_embeddings",
        "include_default_feature", "sampler", "seed", "delete_flags", "replace_flags", "add_flags"};
    auto key = item.first.cast<std::string>();
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      raise(kInvalidParams, "unknown environment option '" + key + "'");
  }
  o.problem = option<std::string>(options, "problem").value_or("inlining");
  o.corpus = option<std::string>(options, "corpus").value_or("");
  o.clang = option<std::string>(options, "clang").value_or(MLGO_DEFAULT_CLANG);
  o.cacheDir = option<std::string>(options, "cache_dir").value_or("");
  o.useDiskCache = option<bool>(options, "disk_cache").value_or(true);
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

Core::Core(const py::dict& options) {
  auto o = environmentOptions(options);
  Result<std::unique_ptr<CoreEnvironment>> created = makeError(ErrorCode::kInternal, "");
  {
    py::gil_scoped_release release;
    created = CoreEnvironment::create(o);
  }
  if (!created.ok())
    raise(codeFor(created.error()), created.error().message());
  core_ = std::move(*created);
  layout_.emplace(core_->describe());
}

py::dict Core::describe() const {
  const auto& d = core().describe();
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

py::list Core::modules() const {
  py::list out;
  for (const auto& module : core().environment().corpus().modules())
    out.append(module.name);
  return out;
}

py::list Core::reset(const py::list& requests) {
  auto& core = this->core();
  std::vector<env::ResetRequest> parsed;
  for (auto item : requests) {
    auto t = item.cast<py::tuple>();
    env::ResetRequest request;
    if (!t[0].is_none())
      request.module = t[0].cast<std::string>();
    if (!t[1].is_none()) {
      auto seed = t[1].cast<int64_t>();
      if (seed < 0)
        raise(kInvalidParams, "seed must be non-negative");
      request.seed = static_cast<uint64_t>(seed);
    }
    if (!t[2].is_none()) {
      auto maxSteps = t[2].cast<int64_t>();
      if (maxSteps < 0)
        raise(kInvalidParams, "max_steps must be non-negative");
      request.options.maxSteps = static_cast<uint64_t>(maxSteps);
    }
    parsed.push_back(std::move(request));
  }
  SignalWatch watch;
  ResetBatch batch;
  {
    py::gil_scoped_release release;
    batch = core.reset(parsed, watch.check());
  }
  watch.rethrow();
  py::list out;
  for (auto& result : batch.results) {
    if (!result.ok()) {
      out.append(makeError(codeFor(result.error()), result.error().message()));
      continue;
    }
    py::tuple step = stepTuple(result->step, &*result);
    out.append(py::make_tuple(result->episode, result->module, step[0], step[1], step[2],
                              step[3], step[4]));
  }
  return out;
}

py::list Core::step(const py::list& episodes, const py::list& actions) {
  auto& core = this->core();
  if (episodes.size() != actions.size())
    raise(kInvalidParams, "step: " + std::to_string(episodes.size()) + " episodes but " +
                              std::to_string(actions.size()) + " actions");
  std::vector<env::EpisodeId> ids;
  std::vector<env::ActionValue> values;
  ids.reserve(episodes.size());
  values.reserve(actions.size());
  for (size_t i = 0; i < episodes.size(); ++i) {
    ids.push_back(episodes[i].cast<env::EpisodeId>());
    values.push_back(toAction(actions[i]));
  }
  SignalWatch watch;
  StepBatch batch;
  {
    py::gil_scoped_release release;
    batch = core.step(ids, values, watch.check());
  }
  watch.rethrow();
  py::list out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!batch.statuses[i].ok())
      out.append(makeError(stepCodeFor(batch.statuses[i].error()),
                           batch.statuses[i].error().message()));
    else
      out.append(stepTuple(batch.results[i], nullptr));
  }
  return out;
}

void Core::closeEpisode(env::EpisodeId episode) {
  auto& core = this->core();
  Status status = Status::success();
  {
    py::gil_scoped_release release;
    status = core.close(episode);
  }
  if (!status.ok())
    raise(status.error().code() == ErrorCode::kNotFound ? kUnknownEpisode
                                                         : codeFor(status.error()),
          status.error().message());
}

} // namespace
} // namespace mlgo::python

PYBIND11_MODULE(_core, m) {
  using namespace mlgo::python;
  m.doc() = "mlgo-env's environment in-process (used by mlgo_env.backend).";
  errorClass = PyErr_NewException("mlgo_env._core.Error", PyExc_RuntimeError, nullptr);
  m.add_object("Error", py::handle(errorClass));
  py::class_<Core>(m, "Core")
      .def(py::init<const py::dict&>(), py::arg("options"))
      .def("describe", &Core::describe)
      .def("modules", &Core::modules)
      .def("reset", &Core::reset, py::arg("requests"),
           "[(module|None, seed|None, max_steps|None), ...] -> per request "
           "(episode, module, obs, reward, terminated, truncated, info) or an Error")
      .def("step", &Core::step, py::arg("episodes"), py::arg("actions"),
           "-> per episode (obs, reward, terminated, truncated, info) or an Error")
      .def("close_episode", &Core::closeEpisode, py::arg("episode"))
      .def("open_episodes", &Core::openEpisodes)
      .def("compiler_pid", &Core::compilerPid, py::arg("episode"))
      .def("shutdown", &Core::shutdown)
      .def_property_readonly("closed", &Core::closed);
}
