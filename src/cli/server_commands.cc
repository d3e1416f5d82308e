//===- src/cli/server_commands.cc - serving agents ------------------------===//
///
/// `mlgo-env [flags]` serves on stdio; `mlgo-env serve --listen=ADDR [flags]`
/// serves on a socket. Both take the environment flags (env_options.h).
///
//===----------------------------------------------------------------------===//
#include "cli/commands.h"
#include "cli/env_options.h"
#include "cli/interrupt.h"

#include "mlgo/server/server.h"
#include "mlgo/support/fd_budget.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <thread>

namespace mlgo::cli {
namespace {

struct ServeFlags {
  EnvironmentFlags env;
  std::string listen;
  double agentTimeoutSeconds = 600;
  size_t maxEpisodesPerConnection = 256;
  size_t maxLineBytes = 1 << 20;
  size_t maxQueuedReplies = 64;
  size_t maxQueuedReplyBytes = 16 << 20;
  unsigned workers = 0;
};

void addServeFlags(CLI::App* command, ServeFlags& flags, bool socket) {
  flags.env.addTo(command);
  if (socket)
    command
        ->add_option("--listen", flags.listen,
                     "HOST:PORT (loopback unless named otherwise) or unix:PATH")
        ->required();
  command
      ->add_option("--agent-timeout", flags.agentTimeoutSeconds,
                   "seconds an episode waits for its agent before it is closed")
      ->capture_default_str();
  command
      ->add_option("--max-episodes-per-connection", flags.maxEpisodesPerConnection,
                   "open episodes one connection may hold")
      ->capture_default_str();
  command->add_option("--max-line-bytes", flags.maxLineBytes, "longest request line accepted")
      ->capture_default_str();
  command
      ->add_option("--max-queued-replies", flags.maxQueuedReplies,
                   "replies queued for a client that does not read, past which its "
                   "connection stops reading")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--max-queued-reply-bytes", flags.maxQueuedReplyBytes,
                   "bytes of replies queued for a client that does not read, past which its "
                   "connection stops reading")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--workers", flags.workers,
                      "threads running blocking calls (default: jobs + 2)");
}

/// Raises the soft RLIMIT_NOFILE to the hard limit and checks that it
/// carries --max-episodes (see fd_budget.h). An explicit --max-episodes the
/// limit cannot carry is refused; the default is lowered to what it
/// carries, with a note. False (after a message) when the server must not
/// start.
bool fitDescriptorLimit(const ServeFlags& flags, env::EnvironmentOptions& options) {
  auto limit = support::raiseFileLimit();
  if (!limit.ok()) {
    std::fprintf(stderr, "mlgo-env: warning: %s\n", limit.error().message().c_str());
    return true;
  }
  unsigned jobs =
      options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  uint64_t needed = support::descriptorsNeeded(options.maxEpisodes, jobs);
  if (needed <= limit->soft)
    return true;
  size_t carried = support::episodesCarried(limit->soft, jobs);
  bool given = flags.env.maxEpisodesOption != nullptr && flags.env.maxEpisodesOption->count() > 0;
  if (given || carried == 0) {
    std::fprintf(stderr,
                 "mlgo-env: --max-episodes=%zu needs about %llu file descriptors, but the limit "
                 "(RLIMIT_NOFILE, hard limit included) is %llu; use --max-episodes=%zu or less, "
                 "or raise the limit (ulimit -n)\n",
                 options.maxEpisodes, static_cast<unsigned long long>(needed),
                 static_cast<unsigned long long>(limit->soft), carried);
    return false;
  }
  std::fprintf(stderr,
               "mlgo-env: note: the file descriptor limit (%llu) carries %zu open episodes, not "
               "the default %zu: serving at most %zu\n",
               static_cast<unsigned long long>(limit->soft), carried, options.maxEpisodes, carried);
  options.maxEpisodes = carried;
  return true;
}

int runServe(const ServeFlags& flags) {
  auto options = flags.env.finish();
  if (!options) {
    std::fprintf(stderr, "mlgo-env: %s\n", options.error().message().c_str());
    return 2;
  }
  if (!fitDescriptorLimit(flags, *options))
    return 2;
  if (!(flags.agentTimeoutSeconds > 0)) {
    std::fprintf(stderr, "mlgo-env: --agent-timeout must be positive\n");
    return 2;
  }
  // The server's scope: everything the environment starts is registered in
  // it. create() runs clang (the capability probe): Ctrl-C must not orphan
  // it. Once serving, the server's own signal set shuts down in order;
  // between the two no compiler runs. Declared before the environment, so
  // it outlives it.
  auto scope = std::make_shared<support::CleanupScope>();
  options->cleanup = scope;
  auto environment = [&] {
    InterruptGuard interrupts("mlgo-env", *scope);
    return env::Environment::create(*options);
  }();
  if (!environment) {
    std::fprintf(stderr, "mlgo-env: %s\n", environment.error().message().c_str());
    return 1;
  }
  if (const auto& missing = (*environment)->describe().ir2vecMissingEntities; !missing.empty())
    std::fprintf(stderr,
                 "mlgo-env: warning: the IR2Vec vocabulary lacks %zu entities (LLVM embeds them "
                 "as zeros), e.g. %s\n",
                 missing.size(), missing.front().c_str());
  // Writes to a vanished agent must fail with EPIPE, not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  server::ServerOptions serverOptions;
  serverOptions.listen = flags.listen;
  serverOptions.limits.maxLineBytes = flags.maxLineBytes;
  serverOptions.limits.maxQueuedReplies = flags.maxQueuedReplies;
  serverOptions.limits.maxQueuedBytes = flags.maxQueuedReplyBytes;
  serverOptions.workers = flags.workers;
  serverOptions.maxEpisodesPerConnection = flags.maxEpisodesPerConnection;
  serverOptions.agentTimeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.agentTimeoutSeconds * 1000));
  auto status = server::serve(**environment, serverOptions);
  if (!status.ok()) {
    std::fprintf(stderr, "mlgo-env: %s\n", status.error().message().c_str());
    return 1;
  }
  return 0;
}

} // namespace

void addServerCommands(CLI::App& app, Action& action) {
  static ServeFlags stdioFlags, socketFlags;
  addServeFlags(&app, stdioFlags, false);
  auto* serve = app.add_subcommand("serve", "serve agents on a TCP or Unix socket");
  addServeFlags(serve, socketFlags, true);
  serve->callback([&action] { action = [] { return runServe(socketFlags); }; });
  // Without a subcommand, mlgo-env serves on stdio (main() runs this).
  app.callback([&app, &action] {
    if (!action && app.get_subcommands().empty())
      action = [] { return runServe(stdioFlags); };
  });
}

} // namespace mlgo::cli
