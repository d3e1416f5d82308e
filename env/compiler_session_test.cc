//===- env/compiler_session_test.cc - sessions against the fake compiler ----===//
#include "mlgo/env/compiler_session.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <cstring>
#include <optional>
#include <thread>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using testing::buildStream;
using ::testing::HasSubstr;
using testing::inliningLikeHeader;
using testing::inliningObservation;
using testing::writeScript;

class CompilerSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    fds_ = testing::openDescriptors();
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    fixtures_ = std::move(*dir);
    testing::writeFile(fixtures_.path() / "object.o", "not really an object");
    std::vector<testing::ScriptedContext> contexts = {
        {"",
         {inliningObservation(1, 0.5f, 1.5f, 1), inliningObservation(2, 0.f, 0.f, 0),
          inliningObservation(10, 2.f, 3.f, 1)}}};
    testing::writeFile(fixtures_.path() / "three.stream",
                       buildStream(inliningLikeHeader(), contexts));
  }

  void TearDown() override {
    fixtures_.remove();
    EXPECT_EQ(testing::childProcesses(), 0u);
    EXPECT_EQ(testing::openDescriptors(), fds_);
  }

  /// Default limits, in the test's scope.
  SessionLimits scoped() {
    SessionLimits limits;
    limits.scope = &scope_;
    return limits;
  }

  /// Starts the fake compiler on a script with `lines`.
  std::unique_ptr<CompilerSession> start(const std::vector<std::string>& lines,
                                         SessionLimits limits = {}) {
    auto script = writeScript(fixtures_.path(), "module", lines);
    auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
    EXPECT_TRUE(dir.ok());
    auto command = testing::fakeCommand(dir->path(), script);
    limits.scope = &scope_;
    auto session = startCompilerSession(std::move(*dir), command, limits);
    EXPECT_TRUE(session.ok()) << session.error().message();
    return session.ok() ? std::move(*session) : nullptr;
  }

  /// Answers 0 to every observation until the session fails or finishes;
  /// returns the error, if any.
  static std::optional<Error> drive(CompilerSession& session) {
    Observation obs;
    for (int i = 0; i < 1000; ++i) {
      auto event = session.next(obs);
      if (!event.ok())
        return event.error();
      if (*event == SessionEvent::kEnd) {
        auto report = session.finish();
        if (!report.ok())
          return report.error();
        return std::nullopt;
      }
      auto st = session.answer(advice(0));
      if (!st.ok())
        return st.error();
    }
    return makeError(ErrorCode::kInternal, "too many observations");
  }

  static std::vector<std::byte> advice(int64_t value) {
    std::vector<std::byte> bytes(8);
    std::memcpy(bytes.data(), &value, 8);
    return bytes;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir fixtures_;
  size_t fds_ = 0;
};

TEST_F(CompilerSessionTest, ReplaysStreamAndDeliversAnswersExactly) {
  auto session = start({"stream three.stream", "object object.o", "answers answers.txt"});
  ASSERT_TRUE(session);
  Observation obs;
  std::vector<int64_t> sent = {1, 0, 1};
  for (size_t i = 0; i < 3; ++i) {
    auto event = session->next(obs);
    ASSERT_TRUE(event.ok()) << event.error().message();
    ASSERT_EQ(*event, SessionEvent::kObservation);
    EXPECT_EQ(obs.id, static_cast<int64_t>(i));
    EXPECT_EQ(obs.context, "");
    ASSERT_EQ(obs.tensors.size(), 3u);
    ASSERT_TRUE(session->answer(advice(sent[i])).ok());
  }
  ASSERT_NE(session->header(), nullptr);
  EXPECT_EQ(*session->header(), inliningLikeHeader());
  auto end = session->next(obs);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, SessionEvent::kEnd);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->observations, 3u);
  EXPECT_TRUE(report->channelOpened);
  EXPECT_EQ(report->contexts, std::vector<std::string>{""});
  EXPECT_EQ(testing::readFile(session->command().objectPath), "not really an object");
  EXPECT_EQ(testing::readFile(fixtures_.path() / "answers.txt"), " 0 1\n 1 0\n 2 1\n");
}

TEST_F(CompilerSessionTest, AnswerOfWrongSizeIsRejectedAndSessionContinues) {
  auto session = start({"stream three.stream", "object object.o"});
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  std::vector<std::byte> shortAnswer(4);
  auto st = session->answer(shortAnswer);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(st.error().message(), HasSubstr("8 bytes"));
  auto early = session->next(obs);
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(early.error().message(), HasSubstr("not been answered"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(session->answer(advice(0)).ok());
    auto event = session->next(obs);
    ASSERT_TRUE(event.ok()) << event.error().message();
    if (*event == SessionEvent::kEnd)
      break;
  }
  EXPECT_TRUE(session->finish().ok());
}

TEST_F(CompilerSessionTest, ContextsWithoutDecisionsEndCleanly) {
  testing::writeFile(fixtures_.path() / "empty.stream",
                     buildStream(inliningLikeHeader(), {{"f", {}}, {"g", {}}}));
  auto session = start({"stream empty.stream", "object object.o"});
  ASSERT_TRUE(session);
  Observation obs;
  auto event = session->next(obs);
  ASSERT_TRUE(event.ok()) << event.error().message();
  EXPECT_EQ(*event, SessionEvent::kEnd);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->observations, 0u);
  EXPECT_EQ(report->contexts, (std::vector<std::string>{"f", "g"}));
}

TEST_F(CompilerSessionTest, CompilerThatNeverOpensTheChannelEnds) {
  auto session = start({"stream three.stream", "object object.o", "fault never-open"});
  ASSERT_TRUE(session);
  Observation obs;
  auto event = session->next(obs);
  ASSERT_TRUE(event.ok()) << event.error().message();
  EXPECT_EQ(*event, SessionEvent::kEnd);
  EXPECT_EQ(session->header(), nullptr);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_FALSE(report->channelOpened);
}

TEST_F(CompilerSessionTest, CompilerThatNeverOpensAndHangsTimesOut) {
  SessionLimits limits;
  limits.compileTimeout = 300ms;
  auto session = start({"fault never-open-hang"}, limits);
  ASSERT_TRUE(session);
  Observation obs;
  auto started = support::Clock::now();
  auto event = session->next(obs);
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.error().code(), ErrorCode::kTimeout);
  EXPECT_THAT(event.error().message(), HasSubstr("did not open its channel"));
  EXPECT_LT(support::Clock::now() - started, 5s);
  // The failure sticks.
  EXPECT_EQ(session->next(obs).error().code(), ErrorCode::kTimeout);
}

TEST_F(CompilerSessionTest, CrashMidEpisodeIsACompilerError) {
  auto session = start({"stream three.stream", "object object.o", "fault crash 1"});
  ASSERT_TRUE(session);
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kCompiler);
  EXPECT_THAT(error->message(), HasSubstr("signal 11"));
}

TEST_F(CompilerSessionTest, HangMidEpisodeTimesOut) {
  SessionLimits limits;
  limits.compileTimeout = 400ms;
  auto session = start({"stream three.stream", "object object.o", "fault hang 1"}, limits);
  ASSERT_TRUE(session);
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kTimeout);
  EXPECT_THAT(error->message(), HasSubstr("after 2 observations"));
}

TEST_F(CompilerSessionTest, AgentThinkTimeDoesNotCountAgainstTheTimeout) {
  SessionLimits limits;
  limits.compileTimeout = 1500ms;
  auto session = start({"stream three.stream", "object object.o"}, limits);
  ASSERT_TRUE(session);
  Observation obs;
  for (;;) {
    auto event = session->next(obs);
    ASSERT_TRUE(event.ok()) << event.error().message();
    if (*event == SessionEvent::kEnd)
      break;
    std::this_thread::sleep_for(600ms); // 1.8 s of "thinking" in total.
    ASSERT_TRUE(session->answer(advice(0)).ok());
  }
  EXPECT_TRUE(session->finish().ok());
}

TEST_F(CompilerSessionTest, StoppedCompilerTimesOutAndIsReaped) {
  SessionLimits limits;
  limits.compileTimeout = 400ms;
  auto session = start({"stream three.stream", "object object.o"}, limits);
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  ASSERT_EQ(::kill(session->pid(), SIGSTOP), 0);
  ASSERT_TRUE(session->answer(advice(1)).ok());
  auto event = session->next(obs);
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.error().code(), ErrorCode::kTimeout);
  // TearDown checks that no child (stopped or zombie) is left.
}

TEST_F(CompilerSessionTest, KilledCompilerIsACompilerError) {
  auto session = start({"stream three.stream", "object object.o"});
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  ASSERT_EQ(::kill(session->pid(), SIGKILL), 0);
  ASSERT_TRUE(session->answer(advice(1)).ok()); // No SIGPIPE in the host.
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kCompiler);
  EXPECT_THAT(error->message(), HasSubstr("signal 9"));
}

TEST_F(CompilerSessionTest, EarlyExitNamesTheCodeAndOutput) {
  auto session = start({"stream three.stream", "object object.o", "fault exit 0"});
  ASSERT_TRUE(session);
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kCompiler);
  EXPECT_THAT(error->message(), HasSubstr("exited with code 3"));
  EXPECT_THAT(error->message(), HasSubstr("exiting early as scripted"));
}

TEST_F(CompilerSessionTest, GarbageOnTheStreamIsAParseError) {
  auto session = start({"stream three.stream", "object object.o", "fault garbage 1"});
  ASSERT_TRUE(session);
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kParse);
  EXPECT_THAT(error->message(), HasSubstr("malformed stream"));
}

TEST_F(CompilerSessionTest, ObservationCapKillsAnEndlessCompiler) {
  SessionLimits limits;
  limits.maxObservations = 50;
  auto session = start({"stream three.stream", "object object.o", "fault spam 1"}, limits);
  ASSERT_TRUE(session);
  Observation obs;
  uint64_t answered = 0;
  for (;;) {
    auto event = session->next(obs);
    if (!event.ok()) {
      EXPECT_EQ(event.error().code(), ErrorCode::kCompiler);
      EXPECT_THAT(event.error().message(), HasSubstr("observation cap"));
      break;
    }
    ASSERT_EQ(*event, SessionEvent::kObservation);
    ASSERT_TRUE(session->answer(advice(0)).ok());
    ASSERT_LE(++answered, 50u);
  }
  EXPECT_EQ(answered, 50u);
}

TEST_F(CompilerSessionTest, CorruptInputEndsWithTheCompilersMessage) {
  testing::writeFile(fixtures_.path() / "corrupt.bc", "BC\xc0\xde garbage");
  auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
  ASSERT_TRUE(dir.ok());
  auto command = testing::fakeCommand(dir->path(), fixtures_.path() / "corrupt.bc");
  auto session = startCompilerSession(std::move(*dir), command, scoped());
  ASSERT_TRUE(session.ok());
  Observation obs;
  auto event = (*session)->next(obs);
  ASSERT_TRUE(event.ok()) << event.error().message();
  ASSERT_EQ(*event, SessionEvent::kEnd);
  auto report = (*session)->finish();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kCompiler);
  EXPECT_THAT(report.error().message(), HasSubstr("exited with code 2"));
  EXPECT_THAT(report.error().message(), HasSubstr("corrupt input"));
}

TEST_F(CompilerSessionTest, MissingCompilerIsNotFound) {
  auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
  ASSERT_TRUE(dir.ok());
  auto command = testing::fakeCommand(dir->path(), fixtures_.path() / "x");
  command.argv[0] = "/nonexistent/clang-99";
  auto session = startCompilerSession(std::move(*dir), command, scoped());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(session.error().message(), HasSubstr("/nonexistent/clang-99"));
}

TEST_F(CompilerSessionTest, DestroyingALiveSessionKillsAndCleansUp) {
  auto session = start({"stream three.stream", "object object.o"});
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  std::filesystem::path dir = session->command().channelBase.parent_path();
  ASSERT_TRUE(std::filesystem::exists(dir));
  session.reset();
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(OutputBufferTest, KeepsHeadAndTail) {
  support::OutputBuffer buffer(4, 3);
  buffer.append("abcdefgh");
  buffer.append("ij");
  EXPECT_EQ(buffer.totalBytes(), 10u);
  std::string text = buffer.text();
  EXPECT_TRUE(text.starts_with("abcd"));
  EXPECT_TRUE(text.ends_with("hij"));
  EXPECT_THAT(text, HasSubstr("3 bytes of output omitted"));
}

} // namespace
} // namespace mlgo::env
