//===- support/spawn_test.cc - children die with their spawner ------------===//
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/spawn.h"
#include "mlgo/support/subprocess.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace mlgo::support {
namespace {

using namespace std::chrono_literals;

TEST(Spawner, ChildrenDieWithTheSpawnerThread) {
  CleanupScope scope; // Outlives what is registered in it.
  std::unique_ptr<Subprocess> child;
  {
    Spawner spawner;
    auto spawned = Subprocess::spawn(scope, {{"sleep", "100"}, {}, &spawner});
    ASSERT_TRUE(spawned.ok()) << spawned.error().message();
    child = std::move(*spawned);
    EXPECT_FALSE(child->tryReap());
  } // The thread ends here: the kernel SIGKILLs the child.
  ASSERT_TRUE(child->waitUntil(Clock::now() + 5s).ok());
  ASSERT_TRUE(child->exitStatus().has_value());
  EXPECT_FALSE(child->exitStatus()->exited);
  EXPECT_EQ(child->exitStatus()->signal, SIGKILL);
}

TEST(Spawner, StopKillsTheChildrenAndRefusesNewOnes) {
  CleanupScope scope; // Outlives what is registered in it.
  Spawner spawner;
  auto spawned = Subprocess::spawn(scope, {{"sleep", "100"}, {}, &spawner});
  ASSERT_TRUE(spawned.ok()) << spawned.error().message();
  ::kill((*spawned)->pid(), SIGSTOP); // SIGKILL reaches stopped children too.
  spawner.stop();
  spawner.stop(); // Idempotent.
  ASSERT_TRUE((*spawned)->waitUntil(Clock::now() + 5s).ok());
  EXPECT_EQ((*spawned)->exitStatus()->signal, SIGKILL);
  auto refused = Subprocess::spawn(scope, {{"sleep", "100"}, {}, &spawner});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kIo);
}

TEST(Spawner, ChildrenOutliveTheThreadThatAskedForThem) {
  CleanupScope scope; // Outlives what is registered in it.
  // A worker thread that asks for a child and then ends must not take the
  // child with it: the fork happens on the spawner's own thread.
  Spawner spawner;
  std::unique_ptr<Subprocess> child;
  std::thread([&] {
    auto spawned = Subprocess::spawn(scope, {{"sleep", "100"}, {}, &spawner});
    if (spawned.ok())
      child = std::move(*spawned);
  }).join();
  ASSERT_NE(child, nullptr);
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(child->tryReap()) << "the child died with the thread that asked for it";
}

TEST(Spawner, ChildGetsItsOwnGroupCleanDescriptorsAndOutput) {
  CleanupScope scope; // Outlives what is registered in it.
  Spawner spawner;
  // A descriptor of ours without O_CLOEXEC must not reach the child.
  int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  std::string script = "echo pgid=$(ps -o pgid= -p $$ | tr -d ' ') pid=$$; "
                       "[ -e /proc/$$/fd/" +
                       std::to_string(leaked) +
                       " ] && echo leaked; "
                       "echo err >&2; read x; echo stdin=$?";
  auto spawned = Subprocess::spawn(scope, {{"sh", "-c", script}, {"MLGO_SPAWN_TEST=1"}, &spawner});
  ::close(leaked);
  ASSERT_TRUE(spawned.ok()) << spawned.error().message();
  Subprocess& child = **spawned;
  ASSERT_TRUE(child.waitUntil(Clock::now() + 10s).ok());
  std::string out = child.outputText();
  EXPECT_TRUE(child.exitStatus()->success()) << out;
  std::string pid = std::to_string(child.pid());
  EXPECT_NE(out.find("pgid=" + pid + " pid=" + pid), std::string::npos) << out;
  EXPECT_EQ(out.find("leaked"), std::string::npos) << out;
  EXPECT_NE(out.find("err"), std::string::npos) << out;
  EXPECT_NE(out.find("stdin=1"), std::string::npos) << out; // EOF from /dev/null.
}

TEST(Spawner, InheritedOutputGoesToTheHostsStdoutAndStderrApart) {
  CleanupScope scope; // Outlives what is registered in it.
  char outName[] = "/tmp/mlgo-spawn-out-XXXXXX";
  char errName[] = "/tmp/mlgo-spawn-err-XXXXXX";
  int outFile = ::mkstemp(outName);
  int errFile = ::mkstemp(errName);
  ASSERT_GE(outFile, 0);
  ASSERT_GE(errFile, 0);
  // The host's own stdout and stderr become the two files for the spawn.
  std::fflush(stdout);
  std::fflush(stderr);
  int savedOut = ::dup(STDOUT_FILENO), savedErr = ::dup(STDERR_FILENO);
  ::dup2(outFile, STDOUT_FILENO);
  ::dup2(errFile, STDERR_FILENO);
  SpawnOptions options{{"sh", "-c", "echo to-out; echo to-err >&2"}, {}, nullptr, true};
  auto spawned = Subprocess::spawn(scope, options);
  ::dup2(savedOut, STDOUT_FILENO);
  ::dup2(savedErr, STDERR_FILENO);
  ::close(savedOut);
  ::close(savedErr);
  ASSERT_TRUE(spawned.ok()) << spawned.error().message();
  EXPECT_EQ((*spawned)->outputFd(), -1);
  ASSERT_TRUE((*spawned)->waitUntil(Clock::now() + 10s).ok());
  EXPECT_TRUE((*spawned)->exitStatus()->success());
  EXPECT_EQ((*spawned)->outputText(), "");
  auto contents = [](int fd) {
    char buffer[64] = {};
    ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    return std::string(buffer, n > 0 ? size_t(n) : 0);
  };
  EXPECT_EQ(contents(outFile), "to-out\n");
  EXPECT_EQ(contents(errFile), "to-err\n");
  ::close(outFile);
  ::close(errFile);
  ::unlink(outName);
  ::unlink(errName);
}

TEST(Spawner, MissingAndUnrunnableProgramsAreErrors) {
  CleanupScope scope; // Outlives what is registered in it.
  Spawner spawner;
  auto missing = Subprocess::spawn(scope, {{"no-such-program-mlgo"}, {}, &spawner});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("no-such-program-mlgo"), std::string::npos);
  auto notExecutable = Subprocess::spawn(scope, {{"/dev/null"}, {}, &spawner});
  ASSERT_FALSE(notExecutable.ok());
  EXPECT_NE(notExecutable.error().message().find("/dev/null"), std::string::npos);
  auto empty = Subprocess::spawn(scope, {{}, {}, &spawner});
  EXPECT_FALSE(empty.ok());
}

} // namespace
} // namespace mlgo::support
