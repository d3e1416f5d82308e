//===- protocol/compact_step.h - step lines without the JSON parser -------===//
///
/// Internal to the protocol library (rpc.cc's decodeLine calls it first).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "mlgo/protocol/rpc.h"

#include <optional>
#include <string_view>

namespace mlgo::protocol::detail {

/// The request our clients send on every step, in their exact compact form:
/// {"jsonrpc":"2.0","id":N,"method":"M","params":{"episode":E,"action":A}}
/// with non-negative integers of at most 18 digits and a lowercase method,
/// decoded without the JSON parser (its cost dominated a step's). Anything
/// else: nullopt, and the parser decodes it to the same Request
/// (rpc_test.cc, CompactStepLinesDecodeAsTheParserDecodesThem). A `step`
/// keeps its integers in Request::compact, its `params` empty.
std::optional<rpc::Request> decodeCompactStep(std::string_view text);

} // namespace mlgo::protocol::detail
