//===- python/src/module.cc - the _core extension of mlgo_env -------------===//
///
/// \file
/// `mlgo_env._core`: the bindings behind mlgo_env's in-process backend
/// (python/mlgo_env/backend.py), the reader of compile_commands.json
/// (compile_entries.h, for the inline-replay writer), the reader, writer
/// and runner of policy files (policy_bindings.h, for mlgo_env.policies), and
/// the tuning table's reader and writer and the stream identity
/// (table_bindings.h, for mlgo_env.tuning). Calls return exactly what the
/// server's JSON would decode to (same info keys, same numbers), with
/// observations as numpy arrays (copies, see tensors.h).
///
/// Errors raise `_core.Error(code, message)` with the server's stable
/// JSON-RPC code for the same failure (docs/protocol.md, "Error codes");
/// batch calls put an Error instance in the failing slot instead of raising. Every wait
/// releases the GIL and checks for signals every 50 ms (core_environment.h):
/// Ctrl-C kills the compilers of the call and raises KeyboardInterrupt.
///
//===----------------------------------------------------------------------===//
#include "compile_entries.h"
#include "convert.h"
#include "core_environment.h"
#include "executable_sections.h"
#include "policy_bindings.h"
#include "table_bindings.h"
#include "tensors.h"

#include <pybind11/stl.h>

#include <optional>

namespace py = pybind11;

namespace mlgo::python {
namespace {

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
                          stepInfo(step, reset, core().describe().defaultActionSource));
  }

  std::unique_ptr<CoreEnvironment> core_;
  std::optional<ObservationLayout> layout_;
};

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

py::dict Core::describe() const { return describeDict(core().describe()); }

py::list Core::modules() const {
  py::list out;
  for (const auto& module : core().environment().corpus().modules())
    out.append(module.name);
  return out;
}

/// Action `i` of a reset's prefix; InvalidAction naming it when it is no number.
env::ActionValue prefixAction(py::handle action, size_t i) {
  if (!PyBool_Check(action.ptr()) && !PyLong_Check(action.ptr()) && !PyFloat_Check(action.ptr()))
    raise(kInvalidAction,
          "actions[" + std::to_string(i) + "] must be an int or a float, not " +
              py::str(py::type::handle_of(action).attr("__name__")).cast<std::string>());
  return toAction(action);
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
    if (t.size() > 3 && !t[3].is_none()) {
      auto prefix = t[3].cast<py::sequence>();
      request.options.actions.reserve(prefix.size());
      for (size_t i = 0; i < prefix.size(); ++i)
        request.options.actions.push_back(prefixAction(prefix[i], i));
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
  for (size_t i = 0; i < batch.results.size(); ++i) {
    auto& result = batch.results[i];
    if (!result.ok()) {
      // With a prefix, kInvalidArgument is one of its actions breaking the rule.
      bool badPrefix = !parsed[i].options.actions.empty() &&
                       result.error().code() == ErrorCode::kInvalidArgument;
      out.append(makeError(badPrefix ? kInvalidAction : codeFor(result.error()),
                           result.error().message()));
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
  m.def("environment_options", &environmentOptionList, "env's option table: make()'s keywords");
  py::class_<Core>(m, "Core")
      .def(py::init<const py::dict&>(), py::arg("options"))
      .def("describe", &Core::describe)
      .def("modules", &Core::modules)
      .def("reset", &Core::reset, py::arg("requests"),
           "[(module|None, seed|None, max_steps|None, actions|None), ...] -> per request "
           "(episode, module, obs, reward, terminated, truncated, info) or an Error")
      .def("step", &Core::step, py::arg("episodes"), py::arg("actions"),
           "-> per episode (obs, reward, terminated, truncated, info) or an Error")
      .def("close_episode", &Core::closeEpisode, py::arg("episode"))
      .def("open_episodes", &Core::openEpisodes)
      .def("compiler_pid", &Core::compilerPid, py::arg("episode"))
      .def("shutdown", &Core::shutdown)
      .def_property_readonly("closed", &Core::closed);
  bindCompileEntries(m);
  bindExecutableSections(m);
  bindPolicies(m);
  bindTable(m);
}
