//===- mlgo/protocol/rpc.h - the agent protocol's JSON-RPC codec -*- C++ -*-===//
///
/// \file
/// Agents talk to mlgo-env in newline-delimited JSON-RPC 2.0: one request (an
/// object) or one batch (a non-empty array of objects) per line; the server
/// answers each line with one line: a response object, or an array of
/// responses in request order for a batch. Notifications (requests without
/// "id") get no response. See docs/protocol.md for the methods.
///
///     -> {"jsonrpc":"2.0","id":1,"method":"reset","params":{"module":"sha256"}}
///     <- {"jsonrpc":"2.0","id":1,"result":{"episode":7,"module":"sha256",...}}
///     -> [{"jsonrpc":"2.0","id":2,"method":"step","params":{"episode":7,"action":1}},
///         {"jsonrpc":"2.0","id":3,"method":"step","params":{"episode":8,"action":0}}]
///     <- [{"jsonrpc":"2.0","id":2,"result":{...}},{"jsonrpc":"2.0","id":3,"error":
///         {"code":-32002,"message":"unknown episode 8"}}]
///
/// This file decodes request lines and encodes responses; it does no I/O.
/// Error codes are stable: agents may switch on them.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_RPC_H
#define MLGO_PROTOCOL_RPC_H

#include "mlgo/support/result.h"

#include <llvm/Support/JSON.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlgo::protocol::rpc {

/// Stable error codes. The first five are JSON-RPC 2.0's; the rest are
/// mlgo-env's, in the range JSON-RPC reserves for servers.
enum class Code : int {
  kParseError = -32700,     ///< The line is not valid JSON.
  kInvalidRequest = -32600, ///< Valid JSON, but not a request (or an empty batch).
  kMethodNotFound = -32601, ///< Unknown method.
  kInvalidParams = -32602,  ///< Missing/mistyped parameters, unknown module.
  kInternalError = -32603,  ///< A bug of ours.
  kInvalidAction = -32001,  ///< The action breaks the problem's rules; episode unchanged.
  kUnknownEpisode = -32002, ///< No such episode (never existed, closed, or not yours).
  kEpisodeFailed = -32003,  ///< The episode ended in error (compiler died, timed out, ...).
  kBusy = -32004,           ///< Server at a configured limit (episodes, queue); retry later.
  kLineTooLong = -32005,    ///< The request line exceeded the server's limit.
};

/// The code's name in docs/protocol.md's table, e.g. "invalid_action".
std::string_view codeName(Code code);

/// A request id exactly as it was sent: its JSON text (a number, a string
/// or null), echoed byte for byte in the response. Numbers are never
/// converted, so `1e999`, 30-digit integers and `1.5e-400` come back as sent.
struct Id {
  std::string json = "null";
  /// The id of a value we made (tests, encoders of our own).
  static Id of(const llvm::json::Value& value);
  friend bool operator==(const Id&, const Id&) = default;
};

/// One decoded request.
struct Request {
  /// The request id (number or string); nullopt for a notification.
  std::optional<Id> id;
  std::string method;
  /// The params object (empty object when absent). Arrays are refused.
  llvm::json::Object params;
  /// A `step` line in the clients' compact form carries its two integers here
  /// and leaves `params` empty: building the object cost more than the rest of
  /// the line's decoding. paramsObject() gives the params of either form.
  struct CompactStep {
    int64_t episode = 0;
    int64_t action = 0;
  };
  std::optional<CompactStep> compact;

  /// `params`, or those of a compact step, as one object (a copy).
  llvm::json::Object paramsObject() const;
};

/// A request that could not be decoded, answered with this error.
struct BadRequest {
  Id id; ///< The id when it could be read, else null.
  Code code;
  std::string message;
};

using Item = std::variant<Request, BadRequest>;

/// A decoded line.
struct Line {
  bool batch = false;
  std::vector<Item> items; ///< Never empty.
};

/// Arrays and objects nested deeper than this in one line are refused
/// (kParseError) before parsing: the parser recurses once per level.
constexpr size_t kMaxNestingDepth = 64;

/// Decodes one request line (without its newline). A line that is not JSON,
/// nests deeper than `maxDepth`, or is an empty batch yields one BadRequest
/// item; a batch yields one item per element, each decoded on its own.
/// `maxBatch` bounds the batch size. Never recurses deeper than `maxDepth`.
Line decodeLine(std::string_view text, size_t maxBatch = 4096,
                size_t maxDepth = kMaxNestingDepth);

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`. The encoders always write
/// valid JSON: a non-finite number anywhere in RESULT or DATA (which JSON
/// cannot spell) is written as null.
std::string encodeResult(const Id& id, llvm::json::Value result);
/// `{"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M[,"data":D]}}`
std::string encodeError(const Id& id, Code code, std::string_view message,
                        std::optional<llvm::json::Value> data = std::nullopt);
/// A response whose result is already serialised JSON text (the fast path for
/// large observations).
std::string encodeRawResult(const Id& id, std::string_view resultJson);
/// The start of such a response, up to its result: append the result's JSON
/// text and a closing `}` to `out` to complete it (no copy of the result).
void appendResultPrefix(std::string& out, const Id& id);
/// Joins responses into one batch line `[r1,r2,...]` (no newline).
std::string joinBatch(const std::vector<std::string>& responses);

/// Parameter accessors: each fails with a message naming the parameter.
Result<int64_t> requireInt(const llvm::json::Object& params, std::string_view key);
Result<std::optional<int64_t>> optionalInt(const llvm::json::Object& params, std::string_view key);
Result<std::optional<std::string>> optionalString(const llvm::json::Object& params,
                                                  std::string_view key);
Result<std::optional<bool>> optionalBool(const llvm::json::Object& params, std::string_view key);

} // namespace mlgo::protocol::rpc

#endif // MLGO_PROTOCOL_RPC_H
