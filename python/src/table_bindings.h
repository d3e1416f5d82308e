//===- python/src/table_bindings.h - tuning tables in _core -----*- C++ -*-===//
///
/// \file
/// Binds the table layer (mlgo/table/tuning_table.h, table_writer.h,
/// stream_identity.h: the one reader and writer of a tuning directory, and
/// the stream identity and site keys) into `mlgo_env._core` as the
/// submodule `table`, for python/mlgo_env/tuning/table.py and identity.py.
///
/// An entry crosses as a tuple (module, actions: bytes, first, stream,
/// default_score, tuned_score, opt, profile, sites: bytes or None: 8 bytes
/// per decision); a manifest as the dict its JSON is. An observation is a
/// mapping of feature names to numpy arrays (or what numpy.asarray takes),
/// hashed as their contiguous little-endian bytes; digests come back as
/// bytes, so what holds them stays plain data (it pickles).
///
/// Refusals raise ValueError with the table layer's message (the package
/// turns the readers' into its TableError); the writer raises OSError naming
/// the file it could not write; a feature the observation lacks, KeyError.
/// File I/O releases the GIL.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_TABLE_BINDINGS_H
#define MLGO_PYTHON_TABLE_BINDINGS_H

#include <pybind11/pybind11.h>

namespace mlgo::python {

/// Adds the submodule `table` to `m` (see its functions' docstrings).
void bindTable(pybind11::module_& m);

} // namespace mlgo::python

#endif // MLGO_PYTHON_TABLE_BINDINGS_H
