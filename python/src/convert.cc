//===- python/src/convert.cc - C++ values to and from Python --------------===//
#include "convert.h"

#include "mlgo/env/environment_option_table.h"
#include "mlgo/env/step_info.h"

#include <pybind11/stl.h>

#include <span>
#include <string_view>
#include <variant>
#include <vector>

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

/// Builds the info dict from its fields (mlgo/env/step_info.h).
struct DictInfoWriter {
  py::dict& info;

  void field(std::string_view key, std::string_view text) { set(key, py::str(text)); }
  void field(std::string_view key, int64_t number) { set(key, py::int_(number)); }
  void field(std::string_view key, uint64_t number) { set(key, py::int_(number)); }
  void field(std::string_view key, double number) { set(key, py::float_(number)); }
  void field(std::string_view key, bool flag) { set(key, py::bool_(flag)); }
  void field(std::string_view key, const env::ActionValue& action) {
    if (const auto* i = std::get_if<int64_t>(&action))
      field(key, *i);
    else
      field(key, std::get<double>(action));
  }
  void field(std::string_view key, std::span<const double> numbers) {
    py::list values;
    for (double number : numbers)
      values.append(py::float_(number));
    set(key, std::move(values));
  }
  void field(std::string_view key, std::span<const env::ContextScore> contexts) {
    py::list values;
    for (const auto& c : contexts) {
      py::dict context;
      DictInfoWriter inner{context};
      env::visitContextScore(c, inner);
      values.append(std::move(context));
    }
    set(key, std::move(values));
  }
  void set(std::string_view key, py::object value) { info[py::str(key)] = std::move(value); }
};

} // namespace

py::dict stepInfo(const env::StepResult& step, const env::ResetResult* reset,
                  const std::string& defaultActionSource) {
  py::dict info;
  DictInfoWriter writer{info};
  env::visitStepInfo(step, reset, defaultActionSource, writer);
  return info;
}

namespace {

std::string typeName(py::handle value) {
  return py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>();
}

[[noreturn]] void refuse(const std::string& key, const char* wanted, py::handle value) {
  raise(kInvalidParams, key + ": expected " + wanted + ", not " + typeName(value));
}

/// `value` as the OptionValue of `spec.kind`; kInvalidParams naming `key`
/// when it is not of that kind.
env::OptionValue optionValue(const env::EnvironmentOptionSpec& spec, const std::string& key,
                             py::handle value) {
  PyObject* p = value.ptr();
  switch (spec.kind) {
  case env::OptionKind::kSwitch:
    if (!PyBool_Check(p))
      refuse(key, "True or False", value);
    return p == Py_True;
  case env::OptionKind::kCount: {
    if (PyBool_Check(p) || !PyLong_Check(p))
      refuse(key, "an int", value);
    unsigned long long count = PyLong_AsUnsignedLongLong(p);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      raise(kInvalidParams, key + ": " + py::repr(value).cast<std::string>() +
                                " is not a count (0 to 2**64-1)");
    }
    return uint64_t{count};
  }
  case env::OptionKind::kSeconds:
    if (PyBool_Check(p) || !(PyLong_Check(p) || PyFloat_Check(p)))
      refuse(key, "a number of seconds", value);
    return value.cast<double>();
  case env::OptionKind::kText:
    if (!PyUnicode_Check(p))
      refuse(key, "a str", value);
    return value.cast<std::string>();
  case env::OptionKind::kPath: {
    if (!PyUnicode_Check(p) && !PyObject_HasAttrString(p, "__fspath__"))
      refuse(key, "a str or path", value);
    auto path = py::reinterpret_steal<py::object>(PyOS_FSPath(p));
    if (!path || !PyUnicode_Check(path.ptr())) {
      PyErr_Clear();
      refuse(key, "a str or path", value);
    }
    return path.cast<std::string>();
  }
  case env::OptionKind::kTexts: {
    if (PyUnicode_Check(p) || PyBytes_Check(p) || !PySequence_Check(p))
      refuse(key, "a list of str", value);
    std::vector<std::string> texts;
    for (auto item : py::reinterpret_borrow<py::sequence>(value)) {
      if (!PyUnicode_Check(item.ptr()))
        refuse(key + "[" + std::to_string(texts.size()) + "]", "a str", item);
      texts.push_back(item.cast<std::string>());
    }
    return texts;
  }
  }
  raise(kInternalError, key + ": an option of no known kind");
}

py::object pythonValue(const env::OptionValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

} // namespace

env::EnvironmentOptions environmentOptions(const py::dict& options) {
  env::EnvironmentOptions o = env::defaultEnvironmentOptions();
  for (auto [name, value] : options) {
    if (!PyUnicode_Check(name.ptr()))
      refuse("environment option name " + py::repr(name).cast<std::string>(), "a str", name);
    auto key = name.cast<std::string>();
    const env::EnvironmentOptionSpec* spec = env::findEnvironmentOption(key);
    if (!spec)
      raise(kInvalidParams, "unknown environment option '" + key + "'");
    if (value.is_none())
      continue;
    Status set = env::setEnvironmentOption(*spec, o, optionValue(*spec, key, value), key);
    if (!set.ok())
      raise(kInvalidParams, set.error().message());
  }
  if (Status checked = env::checkEnvironmentOptions(o); !checked.ok())
    raise(kInvalidParams, checked.error().message());
  return o;
}

py::list environmentOptionList() {
  const env::EnvironmentOptions defaults = env::defaultEnvironmentOptions();
  auto textOrNone = [](std::string_view text) {
    return text.empty() ? py::object(py::none()) : py::object(py::str(text));
  };
  py::list out;
  for (const env::EnvironmentOptionSpec& spec : env::environmentOptionTable()) {
    py::dict entry;
    entry["keyword"] = textOrNone(spec.keyword);
    entry["flag"] = textOrNone(spec.flag);
    entry["kind"] = py::str(env::optionKindName(spec.kind));
    entry["default"] = pythonValue(spec.get(defaults));
    entry["help"] = py::str(spec.help);
    out.append(std::move(entry));
  }
  return out;
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
