//===- python/src/convert.h - C++ values to and from Python ------*- C++ -*-===//
///
/// \file
/// Conversions for the _core module: environment options from a dict, actions
/// from Python numbers, step infos as the server's JSON would decode, and
/// errors as `_core.Error(code, message)` with the server's stable JSON-RPC
/// code for the same failure. Everything here needs the GIL.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_CONVERT_H
#define MLGO_PYTHON_CONVERT_H

#include "mlgo/env/environment.h"

#include <pybind11/pybind11.h>

#include <string>

namespace mlgo::python {

// The protocol's stable codes (protocol/rpc.h), as Python sees them.
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kInvalidAction = -32001;
constexpr int kUnknownEpisode = -32002;
constexpr int kEpisodeFailed = -32003;
constexpr int kBusy = -32004;

/// _core.Error (a RuntimeError subclass), created by the module at import.
extern PyObject* errorClass;

/// The code the server gives the same reset/create/close failure.
int codeFor(const Error& error);
/// The code the server gives the same step failure.
int stepCodeFor(const Error& error);
/// An Error instance (for batch slots).
pybind11::object makeError(int code, const std::string& message);
/// Raises _core.Error(code, message).
[[noreturn]] void raise(int code, const std::string& message);

/// An int (exact, 64-bit) or a float; kInvalidAction for anything else.
env::ActionValue toAction(pybind11::handle action);
/// The info dict of a step (with the reset's extras when `reset` is given);
/// `defaultActionSource` (the description's) accompanies every default_action.
pybind11::dict stepInfo(const env::StepResult& step, const env::ResetResult* reset,
                        const std::string& defaultActionSource);
/// EnvironmentOptions from make()'s keywords (env's option table; None:
/// the default); kInvalidParams naming an unknown or bad one.
env::EnvironmentOptions environmentOptions(const pybind11::dict& options);
/// The option table as `mlgo_env.environment_options()` lists it: per
/// option a dict of `keyword`, `flag` (None where it has none), `kind`,
/// `default` and `help`.
pybind11::list environmentOptionList();
/// describe() as the server's `describe` result decodes.
pybind11::dict describeDict(const env::EnvironmentDescription& description);

} // namespace mlgo::python

#endif // MLGO_PYTHON_CONVERT_H
