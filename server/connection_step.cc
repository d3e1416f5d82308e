//===- server/connection_step.cc - a lone step in turns -------------------===//
///
/// The hot path of a connection (see connection.h, "Threading"): a lone
/// step runs on the strand while nothing waits, and goes to the executor
/// as soon as something may.
///
/// Per step, in the common case (the agent steps the episode it stepped
/// last), the strand does no more than: parse, queue a wait on the
/// episode's compiler stream (already registered with the io_context),
/// write the action, and, once the stream is readable, read the request and
/// write the reply. The registration (a dup() of the stream descriptor) is
/// kept from step to step (CompilerWatch), and one patience timer per
/// connection, armed at most once per kStepPatience, watches the wait; so a
/// step costs no descriptor, epoll or timer system call of its own.
///
/// Why the wait is queued before the action is written: the reactor
/// watches descriptors edge-triggered, and a wait queued after the
/// compiler's answer arrived would miss that edge. On a fresh registration
/// (first step of an episode) the kernel reports a descriptor that is
/// already readable, so that one is queued after the write.
///
//===----------------------------------------------------------------------===//
#include "mlgo/server/connection.h"

#include <fcntl.h>

namespace mlgo::server {

namespace asio = boost::asio;
using StepTurn = Dispatcher::StepTurn;

/// The registered dup() of one episode's compiler stream (closed, and so
/// deregistered, when dropped; never the environment's own descriptor,
/// which it may close at any time and whose number may be reused).
struct Connection::CompilerWatch {
  CompilerWatch(const Strand& strand, env::EpisodeId episode, int fd)
      : episode(episode), stream(strand, fd) {}
  env::EpisodeId episode;
  asio::posix::stream_descriptor stream;
};

/// One lone step waiting for its compiler's next request.
struct Connection::StepWait {
  StepWait(std::shared_ptr<Dispatcher::PendingStep> call, StepDone done)
      : call(std::move(call)), done(std::move(done)) {}
  std::shared_ptr<Dispatcher::PendingStep> call;
  StepDone done;
  std::shared_ptr<CompilerWatch> watch;
  std::chrono::steady_clock::time_point since;
  bool over = false; ///< Answered, handed to a worker or abandoned.
};

namespace {

/// The episode a step request names, if it names one.
std::optional<env::EpisodeId> steppedEpisode(const protocol::rpc::Request& request) {
  auto id = request.compact ? std::optional<int64_t>(request.compact->episode)
                            : request.params.getInteger("episode");
  if (!id || *id < 0)
    return std::nullopt;
  return static_cast<env::EpisodeId>(*id);
}

} // namespace

void Connection::startStep(const protocol::rpc::Request& request, StepDone done) {
  auto call = std::make_shared<Dispatcher::PendingStep>();
  auto wait = std::make_shared<StepWait>(call, std::move(done));
  auto episode = steppedEpisode(request);
  // Queued before the action reaches the compiler (see the file comment).
  if (watch_ && episode && *episode == watch_->episode)
    armStepWait(wait, watch_);
  std::string reply;
  StepTurn turn = dispatcher_.beginStep(request, episodes_, *call, reply);
  if (turn != StepTurn::kWaiting && wait->watch)
    abandonStepWait(*wait); // Nothing reached the compiler, or a worker takes it.
  switch (turn) {
  case StepTurn::kReplied: wait->done(std::move(reply)); return;
  case StepTurn::kBlocking: finishStepOnWorker(std::move(call), std::move(wait->done)); return;
  case StepTurn::kWaiting: break;
  }
  if (!wait->watch) {
    // Our own descriptor: the episode may close its own at any time (closed
    // by another thread), and a descriptor number must never be
    // deregistered after it was reused.
    int fd = ::fcntl(call->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      finishStepOnWorker(std::move(call), std::move(wait->done));
      return;
    }
    watch_ = std::make_shared<CompilerWatch>(strand_, call->episode, fd);
    armStepWait(wait, watch_);
  }
  wait->since = std::chrono::steady_clock::now();
  waiting_ = wait;
  armPatience(wait->since + kStepPatience);
}

void Connection::armStepWait(std::shared_ptr<StepWait> wait, std::shared_ptr<CompilerWatch> watch) {
  wait->watch = watch;
  watch->stream.async_wait(asio::posix::stream_descriptor::wait_read,
                           [self = shared_from_this(), wait = std::move(wait)](
                               boost::system::error_code ec) { self->onCompilerReadable(wait, ec); });
}

void Connection::abandonStepWait(StepWait& wait) {
  wait.over = true;
  boost::system::error_code ignored;
  wait.watch->stream.cancel(ignored); // Its handler sees `over` and returns.
  wait.watch.reset();
}

void Connection::dropWatch() {
  if (!watch_)
    return;
  boost::system::error_code ignored;
  watch_->stream.close(ignored);
  watch_.reset();
}

void Connection::armPatience(std::chrono::steady_clock::time_point at) {
  if (patienceArmed_)
    return; // It fires at an earlier time and re-arms for the wait then current.
  patienceArmed_ = true;
  patience_.expires_at(at);
  patience_.async_wait([self = shared_from_this()](boost::system::error_code) {
    self->patienceArmed_ = false;
    self->onPatience();
  });
}

void Connection::onPatience() {
  std::shared_ptr<StepWait> wait = waiting_;
  if (!wait || wait->over)
    return; // No step waits: the timer sleeps until the next one.
  auto due = wait->since + kStepPatience;
  if (std::chrono::steady_clock::now() < due) {
    armPatience(due);
    return;
  }
  // The compiler takes long: a worker waits for it, enforcing its timeout.
  waiting_.reset();
  abandonStepWait(*wait);
  dropWatch();
  finishStepOnWorker(wait->call, wait->done);
}

void Connection::onCompilerReadable(std::shared_ptr<StepWait> wait, boost::system::error_code ec) {
  if (wait->over)
    return;
  std::string reply;
  // A failed wait (never expected) is the worker's to sort out.
  StepTurn turn = ec ? StepTurn::kBlocking : dispatcher_.pollStep(*wait->call, episodes_, reply);
  if (turn == StepTurn::kWaiting) {
    armStepWait(wait, wait->watch);
    return;
  }
  wait->over = true;
  waiting_.reset();
  wait->watch.reset();
  if (turn == StepTurn::kReplied) {
    wait->done(std::move(reply));
    return;
  }
  dropWatch(); // The compile is ending: the episode will not be stepped again.
  finishStepOnWorker(wait->call, wait->done);
}

void Connection::finishStepOnWorker(std::shared_ptr<Dispatcher::PendingStep> call, StepDone done) {
  // A begun step holds a job slot: its own lane (fair_executor.h).
  auto run = call->begun ? &FairExecutor::postHolding : &FairExecutor::post;
  (executor_.*run)(id_, [self = shared_from_this(), call = std::move(call),
                       done = std::move(done)]() mutable {
    std::string reply = self->dispatcher_.completeStep(*call, self->episodes_);
    asio::post(self->strand_, [done = std::move(done), reply = std::move(reply)]() mutable {
      done(std::move(reply));
    });
  });
}

} // namespace mlgo::server
