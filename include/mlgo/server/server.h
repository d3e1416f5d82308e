//===- mlgo/server/server.h - the agent server ------------------*- C++ -*-===//
///
/// \file
/// Serves one Environment to agents over stdio, TCP or a Unix socket (see
/// connection.h for the per-connection behaviour and dispatcher.h for the
/// methods).
///
/// - stdio: one connection on stdin/stdout; the server returns when stdin
///   ends and every answer is written. Logs go to stderr only.
/// - TCP `HOST:PORT`: binds loopback by default; any other address must be
///   named explicitly and draws a warning. Port 0 picks a free port.
/// - Unix `unix:PATH`: the socket file is created mode 0600 (a stale socket
///   left by a dead server is replaced; any other existing file is an error)
///   and removed on shutdown.
/// SIGINT and SIGTERM shut the server down promptly, whatever the compilers
/// do: every compiler is killed at once (Environment::shutdown(); calls in
/// flight fail), queued replies get kShutdownGrace to be written,
/// connections are closed, their episodes closed and their compilers
/// reaped, the socket file removed.
/// Once listening, the server prints `mlgo-env: listening on ADDRESS` on
/// stderr.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_SERVER_H
#define MLGO_SERVER_SERVER_H

#include "mlgo/server/connection.h"

#include <chrono>
#include <functional>
#include <string>

namespace mlgo::server {

struct ServerOptions {
  /// "" = stdio; "HOST:PORT"; "unix:PATH".
  std::string listen;
  ConnectionLimits limits;
  /// Threads running blocking environment calls (connection.h); 0 = jobs + 2.
  /// The one I/O thread, which never blocks, comes on top.
  unsigned workers = 0;
  std::chrono::milliseconds agentTimeout{std::chrono::minutes(10)};
  /// See DispatcherOptions.
  size_t maxEpisodesPerConnection = 256;
  /// Called once listening, with the bound address (tests use it).
  std::function<void(const std::string&)> onListening;
};

/// Serves until stdin ends (stdio) or SIGINT/SIGTERM arrives. Errors:
/// kInvalidArgument for a malformed address, kIo when binding fails.
Status serve(env::Environment& environment, const ServerOptions& options);

/// A parsed --listen value.
struct ListenAddress {
  enum class Kind { kStdio, kTcp, kUnix } kind = Kind::kStdio;
  std::string host;
  uint16_t port = 0;
  std::string path;
  bool loopback = true;
};
Result<ListenAddress> parseListenAddress(std::string_view text);

} // namespace mlgo::server

#endif // MLGO_SERVER_SERVER_H
