//===- python/src/policy_convert.cc - policies from Python values ---------===//
#include "policy_convert.h"

#include "mlgo/policy/default_eviction.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace py = pybind11;
namespace json = llvm::json;

namespace mlgo::python {
namespace {

using protocol::ElementType;

std::string typeName(py::handle object) {
  return py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>();
}

json::Value integerOf(py::handle object) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(object.ptr(), &overflow);
  if (overflow == 0)
    return static_cast<int64_t>(value);
  if (overflow > 0) {
    unsigned long long positive = PyLong_AsUnsignedLongLong(object.ptr());
    if (!PyErr_Occurred())
      return static_cast<uint64_t>(positive);
    PyErr_Clear();
  }
  double nearest = PyLong_AsDouble(object.ptr());
  if (PyErr_Occurred()) { // beyond the double range
    PyErr_Clear();
    nearest = overflow > 0 ? std::numeric_limits<double>::infinity()
                           : -std::numeric_limits<double>::infinity();
  }
  return nearest;
}

/// A numeric numpy array of `ndim` dimensions as doubles, or none (other
/// values, bools among them, go through jsonOf, which keeps their type).
py::array_t<double, py::array::c_style | py::array::forcecast> numericArray(py::handle object,
                                                                          int ndim) {
  if (!py::isinstance<py::array>(object))
    return {};
  auto array = py::reinterpret_borrow<py::array>(object);
  char kind = array.dtype().kind();
  if (array.ndim() != ndim || (kind != 'f' && kind != 'i' && kind != 'u'))
    return {};
  return py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
}

json::Value numbers(py::handle object, const std::string& where) {
  auto array = numericArray(object, 1);
  if (!array)
    return jsonOf(object, where);
  json::Array out;
  out.reserve(static_cast<size_t>(array.size()));
  for (py::ssize_t i = 0; i < array.size(); ++i)
    out.push_back(array.data()[i]);
  return out;
}

json::Value matrix(py::handle object, const std::string& where) {
  auto array = numericArray(object, 2);
  if (!array)
    return jsonOf(object, where);
  json::Array rows;
  for (py::ssize_t i = 0; i < array.shape(0); ++i) {
    json::Array row;
    for (py::ssize_t j = 0; j < array.shape(1); ++j)
      row.push_back(array.at(i, j));
    rows.push_back(std::move(row));
  }
  return rows;
}

/// The stream element type of a numpy dtype, if it is one (native byte order).
std::optional<ElementType> elementType(const py::dtype& dtype) {
  std::string order = py::str(dtype.attr("byteorder"));
  if (order == ">")
    return std::nullopt;
  auto size = dtype.itemsize();
  switch (dtype.kind()) {
  case 'f':
    return size == 4 ? std::optional(ElementType::kFloat)
                     : size == 8 ? std::optional(ElementType::kDouble) : std::nullopt;
  case 'i':
    return size == 1 ? std::optional(ElementType::kInt8)
           : size == 2 ? std::optional(ElementType::kInt16)
           : size == 4 ? std::optional(ElementType::kInt32)
           : size == 8 ? std::optional(ElementType::kInt64) : std::nullopt;
  case 'u':
  case 'b': // numpy's bools are bytes holding 0 or 1
    return size == 1 ? std::optional(ElementType::kUInt8)
           : size == 2 ? std::optional(ElementType::kUInt16)
           : size == 4 ? std::optional(ElementType::kUInt32)
           : size == 8 ? std::optional(ElementType::kUInt64) : std::nullopt;
  default:
    return std::nullopt;
  }
}

void addTensor(ObservationTensors& out, const policy::Policy& policy, const std::string& name,
               py::handle value) {
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array)
    throw py::value_error(policy.where() + ": feature '" + name + "' is not an array");
  std::optional<ElementType> type = elementType(array.dtype());
  if (!type) {
    array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
    if (!array)
      throw py::value_error(policy.where() + ": feature '" + name + "' is not numeric");
    type = ElementType::kDouble;
  }
  std::vector<int64_t> shape;
  for (py::ssize_t i = 0; i < array.ndim(); ++i)
    shape.push_back(static_cast<int64_t>(array.shape(i)));
  if (shape.empty())
    shape.push_back(1);
  auto spec = protocol::TensorSpec::create(name, *type, std::move(shape));
  if (!spec.ok())
    throw py::value_error(policy.where() + ": feature '" + name + "': " + spec.error().message());
  out.views.emplace_back(static_cast<const std::byte*>(array.data()),
                         static_cast<size_t>(array.nbytes()));
  out.specs.push_back(std::move(*spec));
  out.arrays.push_back(std::move(array));
}

} // namespace

json::Value jsonOf(py::handle object, const std::string& where) {
  PyObject* o = object.ptr();
  if (object.is_none())
    return nullptr;
  if (PyBool_Check(o))
    return o == Py_True;
  if (PyLong_Check(o))
    return integerOf(object);
  if (PyFloat_Check(o))
    return PyFloat_AsDouble(o);
  if (PyUnicode_Check(o)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(o, &size);
    if (text == nullptr) {
      PyErr_Clear();
      throw py::value_error(where + ": a string that is not valid UTF-8");
    }
    return std::string(text, static_cast<size_t>(size));
  }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    json::Array out;
    for (py::handle item : object)
      out.push_back(jsonOf(item, where));
    return out;
  }
  if (PyDict_Check(o)) {
    json::Object out;
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(object)) {
      if (!PyUnicode_Check(key.ptr()))
        throw py::value_error(where + ": an object key that is not a string (" +
                              py::repr(key).cast<std::string>() + ")");
      out[key.cast<std::string>()] = jsonOf(item, where);
    }
    return out;
  }
  if (py::hasattr(object, "tolist") && py::hasattr(object, "dtype")) // numpy
    return jsonOf(object.attr("tolist")(), where);
  throw py::value_error(where + ": " + typeName(object) + " is not a JSON value");
}

json::Value policyJson(py::handle policy, bool withMetadata, const std::string& where) {
  json::Object out{{"format", std::string(policy::kFormat)},
                   {"version", policy::kNewestVersion},
                   {"problem", jsonOf(policy.attr("problem"), where)},
                   {"features", jsonOf(policy.attr("features"), where)},
                   {"mean", numbers(policy.attr("mean"), where)},
                   {"std", numbers(policy.attr("std"), where)},
                   {"decision", jsonOf(policy.attr("decision"), where)}};
  py::object transforms = policy.attr("transforms");
  if (transforms.is_none()) {
    json::Array all;
    for (size_t i = 0, n = py::len(policy.attr("features")); i < n; ++i)
      all.push_back("signed-log1p");
    out["transforms"] = std::move(all);
  } else {
    out["transforms"] = jsonOf(transforms, where);
  }
  if (py::object margin = policy.attr("margin"); !margin.is_none())
    out["margin"] = jsonOf(margin, where);
  if (py::object mask = policy.attr("mask"); !mask.is_none())
    out["mask"] = jsonOf(mask, where);
  json::Array layers;
  for (py::handle layer : policy.attr("layers"))
    layers.push_back(json::Object{{"weights", matrix(layer.attr("weights"), where)},
                                  {"bias", numbers(layer.attr("bias"), where)},
                                  {"activation", jsonOf(layer.attr("activation"), where)}});
  out["layers"] = std::move(layers);
  if (withMetadata)
    out["metadata"] = jsonOf(policy.attr("metadata"), where + ": 'metadata'");
  return out;
}

ObservationTensors observationTensors(const policy::Policy& policy, py::handle observation,
                                      py::handle info) {
  ObservationTensors out;
  bool candidates = policy.decision() == policy::Decision::kArgmaxMasked;
  std::vector<std::string> names;
  if (candidates)
    names.push_back(policy.maskFeature());
  for (const std::string& name : policy.features())
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  py::object defaultAction;
  if (!info.is_none() && info.contains("default_action"))
    defaultAction = info["default_action"];
  for (const std::string& name : names) {
    py::str key(name);
    if (observation.contains(key)) {
      addTensor(out, policy, name, observation[key]);
    } else if (!candidates && name == policy::kInliningDefaultFeature && defaultAction) {
      py::array_t<double> value(1);
      value.mutable_at(0) = py::float_(defaultAction).cast<double>();
      addTensor(out, policy, name, value);
    } else if (candidates && name == policy::kDefaultEvictionPolicyName) {
      if (!defaultAction)
        throw py::value_error(policy.where() + ": the policy expects feature '" + name +
                              "', which comes from info['default_action'], and the step has none");
      if (out.specs.empty() || out.specs[0].name() != policy.maskFeature())
        continue; // no mask: bind() names it
      auto size = static_cast<py::ssize_t>(out.specs[0].elementCount());
      py::array_t<double> column(size);
      std::fill(column.mutable_data(), column.mutable_data() + size, 0.0);
      auto at = py::int_(defaultAction).cast<int64_t>();
      if (at >= 0 && at < size)
        column.mutable_at(at) = 1.0;
      addTensor(out, policy, name, column);
    }
  }
  return out;
}

} // namespace mlgo::python
