//===- python/src/executable_sections.h - code bytes of objects in _core -*- C++ -*-===//
///
/// \file
/// Binds the corpus layer's reader of an object file's executable sections
/// (mlgo/corpus/executable_sections.h) into `mlgo_env._core`: what the
/// inline-replay writer and the tests compare tuned objects by
/// (python/mlgo_env/elf.py wraps it), read as tuning for size scores them.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_EXECUTABLE_SECTIONS_H
#define MLGO_PYTHON_EXECUTABLE_SECTIONS_H

#include <pybind11/pybind11.h>

namespace mlgo::python {

/// Adds `executable_sections(path)` to `m` (see its docstring).
void bindExecutableSections(pybind11::module_& m);

} // namespace mlgo::python

#endif // MLGO_PYTHON_EXECUTABLE_SECTIONS_H
