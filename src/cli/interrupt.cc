//===- src/cli/interrupt.cc - Ctrl-C for commands that run compilers -------===//
#include "cli/interrupt.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

namespace mlgo::cli {

namespace asio = boost::asio;

struct InterruptGuard::Impl {
  asio::io_context io;
  asio::signal_set signals{io, SIGINT, SIGTERM, SIGHUP};
  std::thread thread;
};

InterruptGuard::InterruptGuard(std::string program, support::CleanupScope& scope)
    : impl_(std::make_unique<Impl>()) {
  impl_->signals.async_wait([program = std::move(program),
                             scope = &scope](boost::system::error_code ec, int signal) {
    if (ec)
      return; // Cancelled: the guard is going away.
    size_t killed = scope->cleanup();
    const char* name = sigabbrev_np(signal);
    if (::isatty(STDERR_FILENO) == 1)
      std::fputs("\n", stderr); // Off a progress line (or the terminal's ^C).
    std::fprintf(stderr,
                 "%s: interrupted (SIG%s); stopped %zu compiler%s and removed temporary files\n",
                 program.c_str(), name != nullptr ? name : "?", killed, killed == 1 ? "" : "s");
    std::fflush(stderr);
    // Die of the signal itself, as an uncaught one would have.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  });
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

InterruptGuard::~InterruptGuard() {
  boost::system::error_code ignored;
  impl_->signals.cancel(ignored);
  impl_->signals.clear(ignored); // Restores the default dispositions.
  impl_->thread.join();
}

} // namespace mlgo::cli
