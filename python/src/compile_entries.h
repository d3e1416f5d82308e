//===- python/src/compile_entries.h - compile_commands.json in _core -*- C++ -*-===//
///
/// \file
/// Binds the corpus layer's reader of compile_commands.json
/// (mlgo/corpus/compile_entry.h) into `mlgo_env._core`, for the inline-replay
/// writer (mlgo_env/tuning/replay_lines.py): one reader, whatever the build
/// style, naming modules as `mlgo-env corpus build` names them.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_COMPILE_ENTRIES_H
#define MLGO_PYTHON_COMPILE_ENTRIES_H

#include <pybind11/pybind11.h>

namespace mlgo::python {

/// Adds `module_compiles(json, source)` to `m` (see its docstring).
void bindCompileEntries(pybind11::module_& m);

} // namespace mlgo::python

#endif // MLGO_PYTHON_COMPILE_ENTRIES_H
