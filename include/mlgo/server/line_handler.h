//===- mlgo/server/line_handler.h - one request line to its reply -*- C++ -*-===//
///
/// \file
/// The transport-free core of a connection: a request line in, its reply
/// line out. Connection (connection.h) does the same asynchronously, running
/// a batch's blocking items in parallel on its executor; handleLine() runs
/// them one after another on the calling thread, for tests, fuzzing and any
/// caller that owns its thread.
///
///   line  := JSON-RPC request | [request, ...]          (protocol/rpc.h)
///   reply := response | [response, ...] | nothing (notifications only)
///            each followed, with binary observations, by "\n" and the
///            frames of its items in order
///
/// A batch's responses come in item order, notifications leave no response,
/// and a batch of notifications only (or a lone notification) has no reply.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_LINE_HANDLER_H
#define MLGO_SERVER_LINE_HANDLER_H

#include "mlgo/server/dispatcher.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::server {

/// Joins the per-item replies of one line (nullopt for notifications) into
/// the reply line, without its final newline; nullopt when there is nothing
/// to send. Replies with binary observations ("JSON\nFRAME") put their JSON
/// in the line and their frames after it, in item order, after a newline.
std::optional<std::string> joinReplies(std::vector<std::optional<std::string>>& replies,
                                       bool batch);

/// Decodes `line` (at most `maxBatch` items) and dispatches every item on
/// this thread, in order. Blocks for as long as the environment calls take.
/// Thread-safe as Dispatcher::handle() is.
std::optional<std::string> handleLine(std::string_view line, Dispatcher& dispatcher,
                                      ConnectionEpisodes& episodes, size_t maxBatch);

} // namespace mlgo::server

#endif // MLGO_SERVER_LINE_HANDLER_H
