//===- python/src/policy_convert.h - policies from Python values -*- C++ -*-===//
///
/// \file
/// What the policy bindings (policy_bindings.h) take from Python: objects
/// as JSON values, the package's `Policy` value as a policy file's JSON
/// (validated by the one reader, mlgo/policy/policy_file.h), and an
/// observation dict (plus the step's info) as the tensors a bound policy
/// reads. Everything here needs the GIL and raises ValueError (pybind11's
/// value_error) naming what is wrong.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_POLICY_CONVERT_H
#define MLGO_PYTHON_POLICY_CONVERT_H

#include "mlgo/policy/policy_file.h"
#include "mlgo/protocol/tensor_spec.h"

#include <llvm/Support/JSON.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <span>
#include <string>
#include <vector>

namespace mlgo::python {

/// A Python object as the JSON value json.dumps would write: None, bool,
/// int (beyond 64 bits: the nearest double, infinite past the double range,
/// as a JSON parser reads such a number), float (NaN and infinities kept,
/// for the reader to name), str, list and tuple, dict with str keys, numpy
/// arrays and scalars. Anything else: ValueError "<where>: <type> is not a
/// JSON value".
llvm::json::Value jsonOf(pybind11::handle object, const std::string& where);

/// mlgo_env's `Policy` value (read by its attributes: problem, features,
/// mean, std, layers of weights/bias/activation, metadata, transforms (None:
/// signed-log1p for every feature), margin, decision, mask) as the JSON of a
/// newest-version file, for Policy::fromJson to validate. `metadata` is left
/// out unless `withMetadata` (running needs none). `where` prefixes jsonOf's
/// messages.
llvm::json::Value policyJson(pybind11::handle policy, bool withMetadata,
                             const std::string& where);

/// One observation as the tensors BoundPolicy::decide reads: the features
/// the policy needs (and its mask), each a C-contiguous numpy array of a
/// stream element type (others are converted to float64). Where the
/// observation lacks them, `inlining_default` is info["default_action"]
/// and, for a regalloc policy, `host-emulation-v2` is 1.0 at
/// info["default_action"] and 0.0 elsewhere (ValueError when the info has
/// no default_action). A feature found nowhere is left out: bind() names it.
struct ObservationTensors {
  std::vector<protocol::TensorSpec> specs;
  std::vector<pybind11::array> arrays; ///< Owns what `views` point into.
  std::vector<std::span<const std::byte>> views;
};
ObservationTensors observationTensors(const policy::Policy& policy, pybind11::handle observation,
                                      pybind11::handle info);

} // namespace mlgo::python

#endif // MLGO_PYTHON_POLICY_CONVERT_H
