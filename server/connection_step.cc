//===- server/connection_step.cc - a lone step in turns -------------------===//
///
/// The hot path of a connection (see connection.h, "Threading"): a lone
/// step runs on the strand while nothing waits, and goes to the executor
/// as soon as something may.
///
//===----------------------------------------------------------------------===//
#include "mlgo/server/connection.h"

#include <fcntl.h>

namespace mlgo::server {

namespace asio = boost::asio;
using StepTurn = Dispatcher::StepTurn;

/// One wait for a compiler's next request: a dup() of its stream
/// descriptor registered with the io_context (closed, and so deregistered,
/// when the wait ends) and the patience timer that hands the wait to a
/// worker.
struct Connection::StepWait {
  StepWait(const Strand& strand, int fd, std::shared_ptr<Dispatcher::PendingStep> call,
           StepDone done)
      : stream(strand, fd), patience(strand), call(std::move(call)), done(std::move(done)) {}
  asio::posix::stream_descriptor stream;
  asio::steady_timer patience;
  std::shared_ptr<Dispatcher::PendingStep> call;
  StepDone done;
  bool over = false; ///< Answered or handed to a worker.
};

void Connection::startStep(const protocol::rpc::Request& request, StepDone done) {
  auto call = std::make_shared<Dispatcher::PendingStep>();
  std::string reply;
  switch (dispatcher_.beginStep(request, episodes_, *call, reply)) {
  case StepTurn::kReplied: done(std::move(reply)); return;
  case StepTurn::kWaiting: waitForCompiler(std::move(call), std::move(done)); return;
  case StepTurn::kBlocking: finishStepOnWorker(std::move(call), std::move(done)); return;
  }
}

void Connection::waitForCompiler(std::shared_ptr<Dispatcher::PendingStep> call, StepDone done) {
  // Our own descriptor: the episode may close its own at any time (closed
  // by another thread), and a descriptor number must never be deregistered
  // after it was reused.
  int fd = ::fcntl(call->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    finishStepOnWorker(std::move(call), std::move(done));
    return;
  }
  auto wait = std::make_shared<StepWait>(strand_, fd, std::move(call), std::move(done));
  wait->patience.expires_after(kStepPatience);
  wait->patience.async_wait([self = shared_from_this(), wait](boost::system::error_code ec) {
    if (ec || wait->over)
      return;
    wait->over = true;
    wait->stream.close();
    self->finishStepOnWorker(wait->call, wait->done);
  });
  armStepWait(std::move(wait));
}

void Connection::armStepWait(std::shared_ptr<StepWait> wait) {
  auto& stream = wait->stream;
  stream.async_wait(asio::posix::stream_descriptor::wait_read,
                    [self = shared_from_this(), wait = std::move(wait)](
                        boost::system::error_code ec) { self->onCompilerReadable(wait, ec); });
}

void Connection::onCompilerReadable(std::shared_ptr<StepWait> wait, boost::system::error_code ec) {
  if (wait->over)
    return;
  std::string reply;
  // A failed wait (never expected) is the worker's to sort out.
  StepTurn turn = ec ? StepTurn::kBlocking : dispatcher_.pollStep(*wait->call, episodes_, reply);
  if (turn == StepTurn::kWaiting) {
    armStepWait(std::move(wait));
    return;
  }
  wait->over = true;
  wait->patience.cancel();
  wait->stream.close();
  if (turn == StepTurn::kReplied)
    wait->done(std::move(reply));
  else
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
