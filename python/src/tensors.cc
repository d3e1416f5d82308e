//===- python/src/tensors.cc - observations as numpy arrays ---------------===//
#include "tensors.h"

#include <cstring>

namespace py = pybind11;

namespace mlgo::python {

const char* numpyDtype(protocol::ElementType type) {
  using protocol::ElementType;
  switch (type) {
  case ElementType::kFloat: return "<f4";
  case ElementType::kDouble: return "<f8";
  case ElementType::kInt8: return "i1";
  case ElementType::kUInt8: return "u1";
  case ElementType::kInt16: return "<i2";
  case ElementType::kUInt16: return "<u2";
  case ElementType::kInt32: return "<i4";
  case ElementType::kUInt32: return "<u4";
  case ElementType::kInt64: return "<i8";
  case ElementType::kUInt64: return "<u8";
  }
  return "<i8";
}

ObservationLayout::ObservationLayout(const env::EnvironmentDescription& description) {
  const auto& specs = description.observationSpecs;
  features_.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Feature feature{py::str(specs[i].name()), py::dtype(numpyDtype(specs[i].type())), {},
                    description.observationOffsets[i], static_cast<size_t>(specs[i].byteSize())};
    for (int64_t dim : specs[i].shape())
      feature.shape.push_back(static_cast<py::ssize_t>(dim));
    features_.push_back(std::move(feature));
  }
}

py::dict ObservationLayout::toDict(const std::vector<std::byte>& bytes) const {
  py::dict out;
  for (const auto& feature : features_) {
    if (feature.offset + feature.size > bytes.size())
      continue;
    py::array array(feature.dtype, feature.shape);
    std::memcpy(array.mutable_data(), bytes.data() + feature.offset, feature.size);
    out[feature.name] = std::move(array);
  }
  return out;
}

} // namespace mlgo::python
