//===- server/server.cc - the agent server --------------------------------===//
#include "mlgo/server/server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

namespace mlgo::server {

namespace asio = boost::asio;
using asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

Result<ListenAddress> parseListenAddress(std::string_view text) {
  ListenAddress address;
  if (text.empty() || text == "stdio")
    return address;
  if (text.starts_with("unix:")) {
    address.kind = ListenAddress::Kind::kUnix;
    address.path = std::string(text.substr(5));
    if (address.path.empty())
      return makeError(ErrorCode::kInvalidArgument, "--listen=unix:PATH needs a path");
    if (address.path.size() >= sizeof(sockaddr_un::sun_path))
      return makeError(ErrorCode::kInvalidArgument, "unix socket path longer than {} bytes: {}",
                       sizeof(sockaddr_un::sun_path) - 1, address.path);
    return address;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return makeError(ErrorCode::kInvalidArgument,
                     "--listen must be HOST:PORT or unix:PATH, not '{}'", text);
  address.kind = ListenAddress::Kind::kTcp;
  address.host = std::string(text.substr(0, colon));
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);
  if (address.host.empty() || address.host == "localhost")
    address.host = "127.0.0.1";
  auto portText = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (ec != std::errc() || end != portText.data() + portText.size() || port > 65535)
    return makeError(ErrorCode::kInvalidArgument, "--listen: invalid port '{}'", portText);
  address.port = static_cast<uint16_t>(port);
  boost::system::error_code bad;
  auto ip = asio::ip::make_address(address.host, bad);
  if (bad)
    return makeError(ErrorCode::kInvalidArgument, "--listen: '{}' is not an IP address",
                     address.host);
  address.loopback = ip.is_loopback();
  return address;
}

namespace {

/// Owns the I/O context, the executor and the live connections. The
/// acceptors, the signal set and the connection table live on serverStrand_.
/// kIoThreads threads run the I/O context; they never block (connection.h),
/// so one serves any number of connections. Blocking calls run on the
/// executor's `workers` threads. (Measured with bench_server_step: a second
/// I/O thread only added wake-ups: 10-40 us more server CPU per step.)
class Server {
public:
  Server(env::Environment& environment, const ServerOptions& options)
      : options_(options),
        dispatcher_(environment,
                    DispatcherOptions{options.agentTimeout, options.maxEpisodesPerConnection}),
        executor_(options.workers ? options.workers : environment.describe().jobs + 2,
                  environment.describe().jobs),
        serverStrand_(asio::make_strand(io_)), signals_(serverStrand_, SIGINT, SIGTERM, SIGHUP) {}

  Status run(const ListenAddress& address) {
    signals_.async_wait([this](boost::system::error_code ec, int signal) {
      if (!ec) {
        std::fprintf(stderr, "mlgo-env: signal %d: shutting down\n", signal);
        stop();
      }
    });
    Status started = address.kind == ListenAddress::Kind::kStdio ? startStdio()
                     : address.kind == ListenAddress::Kind::kTcp ? startTcp(address)
                                                                 : startUnix(address);
    if (!started.ok())
      return started;
    std::vector<std::thread> ioThreads;
    for (unsigned i = 1; i < kIoThreads; ++i)
      ioThreads.emplace_back([this] { io_.run(); });
    io_.run();
    for (auto& t : ioThreads)
      t.join();
    if (!unixPath_.empty())
      std::filesystem::remove(unixPath_);
    return Status::success();
  }

private:
  Status startStdio() {
    boost::system::error_code ec;
    auto strand = asio::make_strand(io_);
    asio::posix::stream_descriptor in(strand), out(strand);
    in.assign(pollable(STDIN_FILENO, true), ec);
    if (!ec)
      out.assign(pollable(STDOUT_FILENO, false), ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot serve on stdio: {}", ec.message());
    stdio_ = true;
    adopt(std::make_shared<StdioConnection>(std::move(in), std::move(out), strand, dispatcher_,
                                            executor_, options_.limits, closer()));
    announce("stdio");
    return Status::success();
  }

  Status startTcp(const ListenAddress& address) {
    if (!address.loopback)
      std::fprintf(stderr,
                   "mlgo-env: warning: listening on %s, which is not a loopback address: anyone "
                   "who can reach it can run compilers on this machine\n",
                   address.host.c_str());
    boost::system::error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
    tcpAcceptor_.emplace(serverStrand_);
    tcpAcceptor_->open(endpoint.protocol(), ec);
    if (!ec)
      tcpAcceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
      tcpAcceptor_->bind(endpoint, ec);
    if (!ec)
      tcpAcceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot listen on {}:{}: {}", address.host, address.port,
                       ec.message());
    auto bound = tcpAcceptor_->local_endpoint();
    announce(fmt::format("{}:{}", bound.address().to_string(), bound.port()));
    accept(*tcpAcceptor_);
    return Status::success();
  }

  Status startUnix(const ListenAddress& address) {
    struct stat st;
    if (::lstat(address.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return makeError(ErrorCode::kIo,
                         "cannot listen on unix:{}: a file that is not a socket "
                         "exists there",
                         address.path);
      // A socket nobody answers on is a dead server's leftover.
      asio::io_context probeContext;
      unix_socket::socket probe(probeContext);
      boost::system::error_code ec;
      probe.connect(unix_socket::endpoint(address.path), ec);
      if (!ec)
        return makeError(ErrorCode::kIo, "cannot listen on unix:{}: another server is using it",
                         address.path);
      std::filesystem::remove(address.path);
    }
    boost::system::error_code ec;
    unixAcceptor_.emplace(serverStrand_);
    unixAcceptor_->open(unix_socket(), ec);
    mode_t old = ::umask(0177); // The socket file is created 0600.
    if (!ec)
      unixAcceptor_->bind(unix_socket::endpoint(address.path), ec);
    ::umask(old);
    if (!ec)
      ::chmod(address.path.c_str(), 0600);
    if (!ec)
      unixAcceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot listen on unix:{}: {}", address.path, ec.message());
    unixPath_ = address.path;
    announce("unix:" + address.path);
    accept(*unixAcceptor_);
    return Status::success();
  }

  /// Accepts the next connection on `acceptor` (tcpAcceptor_ or
  /// unixAcceptor_, which outlive every accept) and adopts it as a
  /// StreamConnection on a strand of its own, then accepts again, until the
  /// server stops. A failed accept backs off instead of spinning.
  template <typename Acceptor> void accept(Acceptor& acceptor) {
    using Socket = typename Acceptor::protocol_type::socket;
    auto strand = asio::make_strand(io_);
    acceptor.async_accept(
        strand, [this, &acceptor, strand](boost::system::error_code ec, Socket socket) {
          if (ec == asio::error::operation_aborted || stopping_)
            return;
          if (ec) {
            backOff(ec, [this, &acceptor] { accept(acceptor); });
            return;
          }
          acceptFailing_ = false;
          uint64_t id = nextId_++;
          std::string name = prepare(socket, id);
          adopt(std::make_shared<StreamConnection<Socket>>(std::move(socket), strand, dispatcher_,
                                                           executor_, options_.limits, id,
                                                           std::move(name), closer()));
          accept(acceptor);
        });
  }

  /// What differs between the socket types: a TCP connection gets
  /// TCP_NODELAY and is named by its peer; a Unix one by its number.
  static std::string prepare(tcp::socket& socket, uint64_t) {
    boost::system::error_code ignored, peerError;
    socket.set_option(tcp::no_delay(true), ignored);
    auto peer = socket.remote_endpoint(peerError);
    return peerError ? "tcp" : fmt::format("{}:{}", peer.address().to_string(), peer.port());
  }
  static std::string prepare(unix_socket::socket&, uint64_t id) {
    return fmt::format("unix#{}", id);
  }

  /// An accept failed (EMFILE/ENFILE when out of descriptors, ENOBUFS...):
  /// retrying at once would spin, since the pending connection stays in the
  /// backlog. Waits kAcceptBackoff on the server's strand, then `retry`.
  /// Says so once per run of failures.
  void backOff(boost::system::error_code ec, std::function<void()> retry) {
    asio::post(serverStrand_, [this, ec, retry = std::move(retry)] {
      if (stopping_)
        return;
      if (!acceptFailing_)
        std::fprintf(stderr, "mlgo-env: cannot accept a connection: %s; retrying every %lld ms\n",
                     ec.message().c_str(), static_cast<long long>(kAcceptBackoff.count()));
      acceptFailing_ = true;
      acceptBackoff_.expires_after(kAcceptBackoff);
      acceptBackoff_.async_wait([this, retry](boost::system::error_code waited) {
        if (!waited && !stopping_)
          retry();
      });
    });
  }

  /// The connection table lives on serverStrand_; accepts complete on
  /// strands of their own, so the bookkeeping moves there.
  void adopt(std::shared_ptr<Connection> connection) {
    asio::post(serverStrand_, [this, connection = std::move(connection)] {
      if (stopping_)
        return; // Dropped: its socket closes with it.
      connections_[connection->id()] = connection;
      connection->start();
    });
  }

  /// Runs on the connection's strand; the bookkeeping moves to ours.
  Connection::OnClosed closer() {
    return [this](uint64_t id) {
      asio::post(serverStrand_, [this, id] {
        connections_.erase(id);
        if ((stdio_ || stopping_) && connections_.empty())
          finish();
      });
    };
  }

  void stop() {
    if (stopping_)
      return;
    stopping_ = true;
    // Compiles in flight (stuck, stopped or queued for a job slot) end now,
    // so the executor's workers and every connection finish promptly. Waits
    // at most for a spawn under way (milliseconds).
    dispatcher_.environment().shutdown();
    boost::system::error_code ignored;
    if (tcpAcceptor_)
      tcpAcceptor_->close(ignored);
    if (unixAcceptor_)
      unixAcceptor_->close(ignored);
    acceptBackoff_.cancel();
    if (connections_.empty()) {
      finish();
      return;
    }
    auto live = connections_;
    for (auto& [id, connection] : live)
      connection->shutdown();
  }

  void finish() {
    signals_.cancel();
    io_.stop();
  }

  void announce(const std::string& where) {
    std::fprintf(stderr, "mlgo-env: listening on %s\n", where.c_str());
    if (options_.onListening)
      options_.onListening(where);
  }

  /// epoll refuses regular files: relay such a stdin/stdout through a pipe.
  int pollable(int fd, bool input) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      return ::dup(fd);
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0)
      return ::dup(fd);
    int keep = input ? pipeFds[0] : pipeFds[1];
    int relayEnd = input ? pipeFds[1] : pipeFds[0];
    int file = ::dup(fd);
    relays_.emplace_back([file, relayEnd, input] {
      char buffer[65536];
      int from = input ? file : relayEnd, to = input ? relayEnd : file;
      for (;;) {
        ssize_t n = ::read(from, buffer, sizeof buffer);
        if (n <= 0)
          break;
        for (ssize_t done = 0; done < n;) {
          ssize_t w = ::write(to, buffer + done, static_cast<size_t>(n - done));
          if (w <= 0)
            break;
          done += w;
        }
      }
      ::close(file);
      ::close(relayEnd);
    });
    return keep;
  }

public:
  ~Server() {
    for (auto& relay : relays_)
      relay.detach(); // A relay blocked on a terminal read must not hold up exit.
  }

private:
  static constexpr unsigned kIoThreads = 1;
  ServerOptions options_;
  // Concurrency hint 1: one thread runs the context (kIoThreads), so work it
  // posts to itself goes to its private queue, without the lock and without
  // interrupting epoll (an epoll_ctl and an extra epoll_wait on every step
  // otherwise). Workers still post from their threads, under the lock.
  asio::io_context io_{static_cast<int>(kIoThreads)};
  Dispatcher dispatcher_;
  FairExecutor executor_;
  Connection::Strand serverStrand_;
  asio::signal_set signals_;
  std::optional<tcp::acceptor> tcpAcceptor_;
  std::optional<unix_socket::acceptor> unixAcceptor_;
  static constexpr std::chrono::milliseconds kAcceptBackoff{100};
  asio::steady_timer acceptBackoff_{serverStrand_};
  std::atomic<bool> acceptFailing_{false};
  std::string unixPath_;
  std::map<uint64_t, std::shared_ptr<Connection>> connections_;
  uint64_t nextId_ = 1;
  bool stdio_ = false;
  std::atomic<bool> stopping_{false}; // Read by accept handlers on other strands.
  std::vector<std::thread> relays_;
};

} // namespace

Status serve(env::Environment& environment, const ServerOptions& options) {
  auto address = parseListenAddress(options.listen);
  if (!address)
    return std::move(address).error();
  try {
    Server server(environment, options);
    return server.run(*address);
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kIo, "server: {}", e.what());
  }
}

} // namespace mlgo::server
