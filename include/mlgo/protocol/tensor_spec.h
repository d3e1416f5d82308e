//===- mlgo/protocol/tensor_spec.h - tensor name, type and shape -*- C++ -*-===//
///
/// \file
/// A TensorSpec describes one feature or advice tensor exchanged with the
/// compiler: its name, element type, port and shape. Its JSON form is LLVM's:
///
///     {"name":"mask","type":"int64_t","port":0,"shape":[1,33]}
///
/// with the fields in that order and no spaces (toJson() reproduces clang's
/// bytes exactly). Element types use LLVM's ten spellings: float, double,
/// int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t.
/// Tensors are dense, row-major, native little-endian.
///
/// A TensorSpec is a value type; construction validates it (non-negative
/// dimensions, element count and byte size fit in 64 bits), so byteSize()
/// never overflows.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_TENSOR_SPEC_H
#define MLGO_PROTOCOL_TENSOR_SPEC_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::protocol {

/// The ten element types LLVM's TensorSpec supports, in LLVM's order.
enum class ElementType : uint8_t {
  kFloat,
  kDouble,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
};

inline constexpr ElementType kAllElementTypes[] = {
    ElementType::kFloat,  ElementType::kDouble, ElementType::kInt8,  ElementType::kUInt8,
    ElementType::kInt16,  ElementType::kUInt16, ElementType::kInt32, ElementType::kUInt32,
    ElementType::kInt64,  ElementType::kUInt64};

/// LLVM's spelling ("float", "int64_t", ...).
std::string_view spelling(ElementType type);
/// Inverse of spelling(); nullopt for anything else.
std::optional<ElementType> parseElementType(std::string_view spelling);
/// Size of one element in bytes.
size_t elementSize(ElementType type);
/// True for float and double.
bool isFloatingPoint(ElementType type);
/// True for the signed integer types.
bool isSigned(ElementType type);

class TensorSpec {
public:
  /// Validates and builds a spec. Fails on a negative dimension or when the
  /// element count or byte size overflows 64 bits.
  static Result<TensorSpec> create(std::string name, ElementType type, std::vector<int64_t> shape,
                                   int port = 0);

  /// Parses LLVM's JSON form (one object). Field order is free; `name`,
  /// `type` and `shape` are required, `port` defaults to 0.
  static Result<TensorSpec> fromJson(std::string_view json);

  /// LLVM's JSON form, byte-identical to what clang writes.
  std::string toJson() const;
  /// Appends toJson() to `out`.
  void appendJson(std::string& out) const;

  const std::string& name() const { return name_; }
  ElementType type() const { return type_; }
  int port() const { return port_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  /// Product of the dimensions (1 for a scalar with empty shape).
  uint64_t elementCount() const { return elementCount_; }
  /// elementCount() * elementSize(type()).
  uint64_t byteSize() const { return byteSize_; }

  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.name_ == b.name_ && a.type_ == b.type_ && a.port_ == b.port_ && a.shape_ == b.shape_;
  }

private:
  TensorSpec() = default;

  std::string name_;
  ElementType type_ = ElementType::kInt64;
  int port_ = 0;
  std::vector<int64_t> shape_;
  uint64_t elementCount_ = 0;
  uint64_t byteSize_ = 0;
};

/// Reads element `index` of a raw little-endian tensor as T. The bytes need
/// not be aligned. The caller guarantees `index` is in range.
template <typename T> T loadElement(const std::byte* data, size_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}

/// Element `index` of a tensor of type `type`, widened to double (int64
/// values beyond 2^53 lose precision; use loadElement for exact reads).
double elementAsDouble(ElementType type, const std::byte* data, size_t index);
/// elementAsDouble of elements 0 .. out.size()-1 into `out`, the type
/// dispatched once for them all (a hot path reads whole tensors).
void elementsAsDouble(ElementType type, const std::byte* data, std::span<double> out);

/// Appends element `index` in its natural text form (integers exactly;
/// floating point with enough digits to round-trip).
void appendElementText(std::string& out, ElementType type, const std::byte* data, size_t index);

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_TENSOR_SPEC_H
