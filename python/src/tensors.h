//===- python/src/tensors.h - observations as numpy arrays ------*- C++ -*-===//
///
/// \file
/// Turns an observation's bytes (the visible tensors concatenated in spec
/// order, env::AgentObservation::bytes) into `{feature: numpy.ndarray}`, one
/// array per feature with the spec's dtype (little-endian) and shape.
///
/// The arrays are copies: they own their memory, are writable, and stay
/// valid for as long as Python holds them, whatever the environment does
/// next. (A regalloc observation is ~6 KB; the copy costs far less than the
/// step.) Every function here needs the GIL.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PYTHON_TENSORS_H
#define MLGO_PYTHON_TENSORS_H

#include "mlgo/env/environment.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <vector>

namespace mlgo::python {

/// numpy's name for an element type ("<f4", "<i8", ...).
const char* numpyDtype(protocol::ElementType type);

/// The features of an environment, prepared once for fast conversion.
class ObservationLayout {
public:
  explicit ObservationLayout(const env::EnvironmentDescription& description);

  /// A dict of fresh arrays (see the file comment). A feature whose bytes are
  /// missing from `bytes` (never seen in practice) is left out.
  pybind11::dict toDict(const std::vector<std::byte>& bytes) const;

private:
  struct Feature {
    pybind11::str name;
    pybind11::dtype dtype;
    std::vector<pybind11::ssize_t> shape;
    size_t offset = 0;
    size_t size = 0;
  };
  std::vector<Feature> features_;
};

} // namespace mlgo::python

#endif // MLGO_PYTHON_TENSORS_H
