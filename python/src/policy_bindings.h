//===- python/src/policy_bindings.h - policy files in _core -----*- C++ -*-===//
///
/// \file
/// Binds the policy layer (mlgo/policy/policy_file.h, policy_runner.h: the
/// one reader, writer and runner of policy files) into `mlgo_env._core` as
/// the class `Policy`, for python/mlgo_env/policies/: load and validate
/// (`Policy.load`, `Policy.from_json`, `Policy.of` a package `Policy`
/// value), write (`text`), read back (`fields`), and run (`decide` one
/// observation, `logits` and `decisions` of raw rows). Every refusal raises
/// ValueError with the policy layer's message (docs/policy-format.md); the
/// package turns it into its PolicyError. Calls hold the GIL except while
/// reading a file.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_POLICY_BINDINGS_H
#define MLGO_PYTHON_POLICY_BINDINGS_H

#include <pybind11/pybind11.h>

namespace mlgo::python {

/// Adds the class `Policy` to `m` (see its docstrings).
void bindPolicies(pybind11::module_& m);

} // namespace mlgo::python

#endif // MLGO_PYTHON_POLICY_BINDINGS_H
