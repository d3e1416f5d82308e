//===- env/fake_driver_test.cc - the in-process fake acts like a process ---===//
//
// The same recorded clang stream played two ways: by the fake compiler
// *process* behind real fifos (startCompilerSession, testing/fake_compiler.cc)
// and by the in-process FakeDriver. The host must not see a difference:
// the same observations, bytes, contexts and counts, and the same failures
// for the same faults. No clang needed.
//
#include "mlgo/env/compiler_session.h"

#include "testing/fake_driver.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

using testing::FakeDriver;
using testing::FakeFault;
using testing::FakeModule;
using ::testing::HasSubstr;

/// What a host saw of one compile, answering 0 (int64 advice) throughout.
struct Seen {
  std::vector<std::string> observations; ///< "context/id/bytes".
  std::vector<std::string> contexts;
  std::optional<Error> error;
};

Seen drive(CompilerSession& session) {
  Seen seen;
  Observation obs;
  const std::vector<std::byte> zero(8);
  for (int i = 0; i < 1000; ++i) {
    auto event = session.next(obs);
    if (!event.ok()) {
      seen.error = event.error();
      return seen;
    }
    if (*event == SessionEvent::kEnd) {
      auto report = session.finish();
      if (!report.ok())
        seen.error = report.error();
      else
        seen.contexts = report->contexts;
      return seen;
    }
    seen.observations.push_back(
        std::string(obs.context) + "/" + std::to_string(obs.id) + "/" +
        std::string(reinterpret_cast<const char*>(obs.data.data()), obs.data.size()));
    if (auto st = session.answer(zero); !st.ok()) {
      seen.error = st.error();
      return seen;
    }
  }
  return seen;
}

class FakeDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    fixtures_ = std::move(*dir);
    auto stream = testing::loadRecordedStream("inlining.stream");
    ASSERT_TRUE(stream.ok()) << stream.error().message();
    stream_ = *stream;
    testing::writeFile(fixtures_.path() / "recorded.stream", stream_);
    testing::writeFile(fixtures_.path() / "object.o", "mlgo-fake-object\nscore 1\n");
  }
  void TearDown() override { fixtures_.remove(); }

  /// The fake compiler process with a script's fault line (may be empty).
  Seen viaProcess(const std::string& fault) {
    std::vector<std::string> lines = {"stream recorded.stream", "object object.o"};
    if (!fault.empty())
      lines.push_back(fault);
    auto script = testing::writeScript(fixtures_.path(), "module", lines);
    auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
    EXPECT_TRUE(dir.ok());
    auto command = testing::fakeCommand(dir->path(), script);
    auto session = startCompilerSession(std::move(*dir), command, scoped());
    EXPECT_TRUE(session.ok()) << session.error().message();
    return session.ok() ? drive(**session) : Seen{};
  }

  /// The in-process fake.
  Seen inProcess(FakeFault fault, uint64_t after) {
    FakeModule module;
    module.stream = stream_;
    module.fault = fault;
    module.faultAfter = after;
    testing::FakeDriverOptions options;
    options.fallback = module;
    FakeDriver driver(options);
    auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
    EXPECT_TRUE(dir.ok());
    auto command = testing::fakeCommand(dir->path(), "unused.script");
    auto session = driver.startSession(std::move(*dir), command, scoped());
    EXPECT_TRUE(session.ok());
    Seen seen = drive(**session);
    session->reset();
    EXPECT_EQ(driver.liveSessions(), 0u);
    return seen;
  }

  /// Default limits, in the test's scope.
  SessionLimits scoped() {
    SessionLimits limits;
    limits.scope = &scope_;
    return limits;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir fixtures_;
  std::string stream_;
};

TEST_F(FakeDriverTest, ACleanCompileLooksTheSame) {
  Seen process = viaProcess("");
  Seen fake = inProcess(FakeFault::kNone, 0);
  ASSERT_FALSE(process.error) << process.error->message();
  ASSERT_FALSE(fake.error) << fake.error->message();
  EXPECT_EQ(fake.observations.size(), 11u);
  EXPECT_EQ(fake.observations, process.observations);
  EXPECT_EQ(fake.contexts, process.contexts);
}

TEST_F(FakeDriverTest, ACrashLooksTheSame) {
  // The process crashes once observation 3 is sent; the fake instead of
  // sending observation 4: the host sees 4 observations either way.
  Seen process = viaProcess("fault crash 3");
  Seen fake = inProcess(FakeFault::kDie, 4);
  ASSERT_TRUE(process.error && fake.error);
  EXPECT_EQ(fake.error->code(), process.error->code());
  EXPECT_THAT(process.error->message(), HasSubstr("signal 11"));
  EXPECT_THAT(fake.error->message(), HasSubstr("signal 11"));
  EXPECT_EQ(fake.observations, process.observations);
}

TEST_F(FakeDriverTest, AMalformedRecordLooksTheSame) {
  Seen process = viaProcess("fault garbage 2");
  Seen fake = inProcess(FakeFault::kMalformed, 3);
  ASSERT_TRUE(process.error && fake.error);
  EXPECT_EQ(fake.error->code(), process.error->code());
  EXPECT_THAT(process.error->message(), HasSubstr("malformed stream"));
  EXPECT_THAT(fake.error->message(), HasSubstr("malformed stream"));
  EXPECT_EQ(fake.observations, process.observations);
}

TEST_F(FakeDriverTest, NeverOpeningTheChannelLooksTheSame) {
  Seen process = viaProcess("fault never-open");
  Seen fake = inProcess(FakeFault::kNeverOpen, 0);
  ASSERT_FALSE(process.error) << process.error->message();
  ASSERT_FALSE(fake.error) << fake.error->message();
  EXPECT_TRUE(process.observations.empty());
  EXPECT_TRUE(fake.observations.empty());
}

TEST_F(FakeDriverTest, AnExitCodeLooksTheSame) {
  Seen process = viaProcess("exit 1");
  Seen fake = inProcess(FakeFault::kExitCode, 0);
  ASSERT_TRUE(process.error && fake.error);
  EXPECT_EQ(fake.error->code(), process.error->code());
  EXPECT_THAT(process.error->message(), HasSubstr("exited with code 1"));
  EXPECT_THAT(fake.error->message(), HasSubstr("exited with code 1"));
  EXPECT_EQ(fake.observations, process.observations);
}

} // namespace
} // namespace mlgo::env
