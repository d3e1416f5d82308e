//===- env/run_compile_test.cc - plain compiles: failure, timeout, interrupt ===//
#include "mlgo/env/compiler_session.h"
#include "mlgo/env/run_compile.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(RunCompileTest, ReportsFailureAndTimeout) {
  support::CleanupScope scope; // Outlives what is registered in it.
  CompileCommand fails;
  fails.argv = {"/bin/sh", "-c", "echo boom >&2; exit 4"};
  auto report = runCompile(scope, fails, 5s);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(report.error().message(), HasSubstr("exited with code 4"));
  EXPECT_THAT(report.error().message(), HasSubstr("boom"));

  CompileCommand slow;
  slow.argv = {"/bin/sleep", "10"};
  auto started = support::Clock::now();
  auto timedOut = runCompile(scope, slow, 200ms);
  ASSERT_FALSE(timedOut.ok());
  EXPECT_EQ(timedOut.error().code(), ErrorCode::kTimeout);
  EXPECT_LT(support::Clock::now() - started, 3s);
  EXPECT_EQ(testing::childProcesses(), 0u);
}

// A compiler that wrote part of its object and hangs: the caller's interrupt
// (asked on the calling thread, no watcher thread in runCompile) kills and
// reaps it within a slice and removes the partial object.
TEST(RunCompileTest, AnInterruptKillsTheCompileAndRemovesItsPartialOutput) {
  support::CleanupScope scope; // Outlives what is registered in it.
  auto dir = support::TempDir::create(scope, "mlgo-env-run-test-");
  ASSERT_TRUE(dir.ok());
  size_t fds = testing::openDescriptors();
  CompileCommand hangs;
  hangs.objectPath = dir->path() / "out.o";
  hangs.argv = {"/bin/sh", "-c", "echo partial > \"$0\"; exec sleep 60", hangs.objectPath.string()};

  testing::CtrlC ctrlC;
  support::Interrupt interrupt;
  support::InterruptScope installed(interrupt, &ctrlC.check);
  std::thread firer = ctrlC.fireWhen([&] { return std::filesystem::exists(hangs.objectPath); });
  auto report = runCompile(scope, hangs, 60s, nullptr, nullptr, &interrupt);
  auto returned = support::Clock::now();
  firer.join();

  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kInterrupted);
  EXPECT_THAT(report.error().message(), HasSubstr("interrupted"));
  EXPECT_LT(returned - ctrlC.firedAt, 2s); // A slice is 50 ms; generous for a busy machine.
  EXPECT_EQ(testing::childProcesses(), 0u);
  EXPECT_FALSE(std::filesystem::exists(hangs.objectPath));
  EXPECT_EQ(testing::openDescriptors(), fds);
}

} // namespace
} // namespace mlgo::env
