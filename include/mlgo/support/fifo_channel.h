//===- mlgo/support/fifo_channel.h - the host's ends of a fifo pair -*- C++ -*-===//
///
/// \file
/// The host side of the InteractiveModelRunner channel `B`: B.in carries
/// answers to the compiler, B.out carries the compiler's stream to the host.
/// Used by env/'s compiler sessions; see mlgo/env/compiler_session.h for the
/// handshake.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_FIFO_CHANNEL_H
#define MLGO_SUPPORT_FIFO_CHANNEL_H

#include "mlgo/support/result.h"

#include <cstddef>
#include <span>
#include <string>

namespace mlgo::support {

class FifoChannel {
public:
  /// Creates the fifos B.in and B.out (mode 0600). kIo naming the path.
  static Status makeFifos(const std::string& base);

  explicit FifoChannel(std::string base) : base_(std::move(base)) {}
  FifoChannel(const FifoChannel&) = delete;
  FifoChannel& operator=(const FifoChannel&) = delete;
  ~FifoChannel() { close(); }

  /// Opens the host's three ends, none of which can block: first a reader
  /// of its own on B.in (O_RDONLY|O_NONBLOCK succeeds without a writer),
  /// then the writer on B.in (O_WRONLY|O_NONBLOCK succeeds now that a
  /// reader exists; O_NONBLOCK is then cleared), then the reader on B.out
  /// (O_RDONLY|O_NONBLOCK). So the compiler's own blocking opens (B.in for
  /// reading, then B.out for writing) return at once whenever it gets to
  /// them, the host never polls for them, and a compiler that never opens
  /// the fifos cannot block anyone. The reader on B.in is never read: it
  /// only keeps a dying compiler from raising SIGPIPE in the host.
  Status open();
  bool isOpen() const { return outFd_ >= 0; }

  /// Writes all of `bytes` to B.in.
  Status write(std::span<const std::byte> bytes);
  /// Read end of B.out (non-blocking), -1 before connecting.
  int outFd() const { return outFd_; }
  void close();

private:
  std::string base_;
  int inFd_ = -1;
  int inKeepAliveFd_ = -1;
  int outFd_ = -1;
};

} // namespace mlgo::support

#endif // MLGO_SUPPORT_FIFO_CHANNEL_H
