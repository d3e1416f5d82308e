//===- mlgo/protocol/observation_codec.h - tensors as agent JSON -*- C++ -*-===//
///
/// \file
/// How observations and actions look to agents.
///
/// Observation, JSON encoding: `{"feature":[v0,v1,...],...}` in header order,
/// each tensor flattened row-major. Integers print exactly; float and double
/// print in the shortest form that reads back to the same value. Non-finite
/// values print as `NaN`, `Infinity`, `-Infinity` (what Python's json module
/// reads); agents that need strict JSON ask for base64.
///
/// Observation, base64 encoding: `{"feature":"<base64 of the raw bytes>",...}`,
/// the tensor's little-endian bytes as clang sent them, so
/// `numpy.frombuffer(base64.b64decode(s), dtype)` rebuilds it.
///
/// Action: a JSON number, or an array of numbers (one per advice element).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_OBSERVATION_CODEC_H
#define MLGO_PROTOCOL_OBSERVATION_CODEC_H

#include "mlgo/protocol/training_log.h"

#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::protocol {

/// How an observation's tensors travel to an agent. kBinary: the JSON holds
/// only `{"$frame":N}` and the reply line is followed by the N raw bytes of
/// the visible tensors, concatenated in spec order (docs/protocol.md).
enum class TensorEncoding : uint8_t { kJson, kBase64, kBinary };

/// The key of a binary observation's placeholder object.
inline constexpr std::string_view kFrameKey = "$frame";

/// Parses "json" / "base64" / "binary".
std::optional<TensorEncoding> parseTensorEncoding(std::string_view text);

/// Appends the observation object. `include`, when non-empty, has one flag per
/// feature; features flagged false are left out.
void appendObservationJson(std::string& out, const LogHeader& header,
                           std::span<const std::span<const std::byte>> tensors,
                           TensorEncoding encoding, std::span<const bool> include = {});

/// appendObservationJson for many observations of one header, each
/// feature's key written once (a step's hot path). Same bytes.
class ObservationJsonWriter {
public:
  explicit ObservationJsonWriter(LogHeader header);
  const LogHeader& header() const { return header_; }
  void append(std::string& out, std::span<const std::span<const std::byte>> tensors,
              TensorEncoding encoding) const;
  /// The exact length `append` writes in base64 (for one reservation of a
  /// whole reply).
  size_t base64Size(std::span<const std::span<const std::byte>> tensors) const;

private:
  LogHeader header_;
  std::vector<std::string> keys_; ///< `"name":`, escaped.
};

/// Appends one tensor's values as a JSON array (JSON encoding rules above).
void appendTensorJson(std::string& out, const TensorSpec& spec, std::span<const std::byte> data);

/// Standard base64 (RFC 4648, with padding). Encoding uses AVX2 where the CPU
/// has it (protocol/base64.cc); the output is the same on every CPU.
void appendBase64(std::string& out, std::span<const std::byte> bytes);
/// The same characters written at `dst`, which has room for the
/// (size + 2) / 3 * 4 of them; returns their end.
char* encodeBase64(std::span<const std::byte> bytes, char* dst);
Result<std::vector<std::byte>> decodeBase64(std::string_view text);

namespace detail {
/// appendBase64 without the vector path: what tests compare it with.
void appendBase64Portable(std::string& out, std::span<const std::byte> bytes);
} // namespace detail

/// An action as the agent sent it: one entry per element, kept both as the
/// exact integer (when the JSON number was integral) and as a double.
struct ActionValues {
  std::vector<double> values;
  std::vector<int64_t> integers; ///< Same length as values when allIntegral.
  bool allIntegral = true;
};

/// Reads a JSON number or array of numbers. kInvalidArgument names the rule
/// broken (not a number, empty array, nested array).
Result<ActionValues> decodeAction(const llvm::json::Value& action);

} // namespace mlgo::protocol

#endif // MLGO_PROTOCOL_OBSERVATION_CODEC_H
