//===- python/src/policy_bindings.cc - policy files in _core ---------------===//
#include "policy_bindings.h"

#include "policy_convert.h"

#include "mlgo/policy/json_text.h"
#include "mlgo/policy/policy_runner.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace mlgo::python {
namespace {

using policy::Policy;
using Rows = py::array_t<double, py::array::c_style | py::array::forcecast>;

Policy valid(Result<Policy> policy) {
  if (!policy.ok())
    throw py::value_error(policy.error().message());
  return std::move(*policy);
}

Policy load(const std::string& path) {
  Result<Policy> policy = makeError(ErrorCode::kInternal, "not read");
  {
    py::gil_scoped_release release;
    policy = Policy::load(path);
  }
  return valid(std::move(policy));
}

py::array_t<double> array(const std::vector<double>& values) {
  return py::array_t<double>(static_cast<py::ssize_t>(values.size()), values.data());
}

py::dict fields(const Policy& p) {
  py::dict out;
  out["problem"] = p.problem();
  out["features"] = p.features();
  py::list transforms;
  for (policy::Transform t : p.transforms())
    transforms.append(std::string(spelling(t)));
  out["transforms"] = p.version() == 1 ? py::object(py::none()) : py::object(transforms);
  out["margin"] = py::none();
  if (const auto& m = p.margin()) {
    py::dict margin;
    margin["plus"] = p.features()[m->plus];
    margin["minus"] = p.features()[m->minus];
    if (m->anchor)
      margin["anchor"] = p.features()[*m->anchor];
    margin["floor"] = m->floor;
    margin["epsilon"] = m->epsilon;
    out["margin"] = margin;
  }
  out["mean"] = array(p.mean());
  out["std"] = array(p.stdDev());
  py::list layers;
  for (const policy::Layer& layer : p.layers()) {
    py::array_t<double> weights({static_cast<py::ssize_t>(layer.inputs),
                                 static_cast<py::ssize_t>(layer.outputs)},
                                layer.weights.data());
    layers.append(py::make_tuple(weights, array(layer.bias),
                                 std::string(spelling(layer.activation))));
  }
  out["layers"] = layers;
  out["decision"] = std::string(spelling(p.decision()));
  bool candidates = p.decision() == policy::Decision::kArgmaxMasked;
  out["mask"] = candidates ? py::object(py::str(p.maskFeature())) : py::object(py::none());
  out["metadata_json"] = policy::jsonText(llvm::json::Object(p.metadata()));
  return out;
}

std::string text(const Policy& p) {
  Result<std::string> text = p.text();
  if (!text.ok())
    throw py::value_error(text.error().message());
  return std::move(*text);
}

py::tuple decide(const Policy& p, py::handle observation, py::handle info) {
  ObservationTensors tensors = observationTensors(p, observation, info);
  Result<policy::BoundPolicy> bound = p.bind(tensors.specs);
  if (!bound.ok())
    throw py::value_error(bound.error().message());
  std::vector<double> logits;
  int64_t action = bound->decide(tensors.views, logits);
  return py::make_tuple(action, array(logits));
}

/// Raw rows [n, features] as doubles; ValueError for another shape.
Rows rowsOf(const Policy& p, py::handle rows) {
  Rows out = Rows::ensure(rows);
  if (!out || out.ndim() != 2 ||
      out.shape(1) != static_cast<py::ssize_t>(p.features().size()))
    throw py::value_error(p.where() + ": rows must be an array [rows, " +
                          std::to_string(p.features().size()) + "] of the policy's features");
  return out;
}

py::array_t<double> logits(const Policy& p, py::handle rows) {
  Rows values = rowsOf(p, rows);
  std::vector<double> out;
  p.logits({values.data(), static_cast<size_t>(values.size())}, out);
  return array(out);
}

py::array_t<int8_t> decisions(const Policy& p, py::handle rows) {
  Rows values = rowsOf(p, rows);
  auto out = p.decisions({values.data(), static_cast<size_t>(values.size())});
  if (!out.ok())
    throw py::value_error(out.error().message());
  return py::array_t<int8_t>(static_cast<py::ssize_t>(out->size()), out->data());
}

constexpr const char* kClassDoc =
    "A validated policy file (include/mlgo/policy/policy_file.h; docs/policy-format.md): the "
    "one reader, writer and runner, which mlgo_env.policies wraps. Immutable. Refusals raise "
    "ValueError with the policy layer's message.";

} // namespace

void bindPolicies(py::module_& m) {
  py::class_<Policy>(m, "Policy", kClassDoc)
      .def_static("load", &load, py::arg("path"),
                  "Reads and validates a policy file (releases the GIL while reading).")
      .def_static(
          "from_json",
          [](py::handle object, const std::string& where) {
            return valid(Policy::fromJson(jsonOf(object, where), where));
          },
          py::arg("object"), py::arg("where"),
          "Validates a parsed file (dicts, lists, numbers as json.load gives them); `where` "
          "prefixes messages.")
      .def_static(
          "of",
          [](py::handle value, const std::string& where, bool withMetadata) {
            return valid(Policy::fromJson(policyJson(value, withMetadata, where), where));
          },
          py::arg("policy"), py::arg("where"), py::arg("metadata") = true,
          "Validates an mlgo_env.policies.Policy value (by its attributes); without "
          "`metadata`, its metadata is not read (enough to run it).")
      .def("fields", &fields,
           "problem, features, transforms (None for version 1), margin, mean, std, layers "
           "[(weights [inputs, outputs], bias, activation)], decision, mask (None unless "
           "argmax-masked), metadata_json (the metadata as JSON text)")
      .def("text", &text, "The file's text, the oldest version that holds the policy.")
      .def("decide", &decide, py::arg("observation"), py::arg("info") = py::none(),
           "(answer, logits) for one observation {feature: array}; inlining_default and "
           "host-emulation-v2 come from info['default_action'] where it lacks them.")
      .def("logits", &logits, py::arg("rows"),
           "Logits of raw feature rows [n, features] (float64), the runner's arithmetic.")
      .def("decisions", &decisions, py::arg("rows"),
           "0/1 answers (int8) of raw feature rows [n, features]; not for regalloc.")
      .def_property_readonly("where", &Policy::where)
      .def_property_readonly("problem", &Policy::problem);
}

} // namespace mlgo::python
