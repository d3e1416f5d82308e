//===- env/compiler_session_channels_test.cc - two channels, fake compiler --===//
#include "mlgo/env/compiler_session.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <thread>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
using testing::buildStream;
using ::testing::HasSubstr;
using testing::inliningObservation;

/// Sessions whose compiler (the fake one) asks on two channels: channel 0
/// plays an inlining-like stream, channel 1 an eviction-like one, both
/// naming functions f and g (channel 1 also h, with no question), 3
/// questions each.
class TwoChannelSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    fds_ = testing::openDescriptors();
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    fixtures_ = std::move(*dir);
    testing::writeFile(fixtures_.path() / "object.o", "not really an object");
    zero_ = buildStream(
        testing::inliningLikeHeader(),
        {{"f", {inliningObservation(1, 0.5f, 1.5f, 1), inliningObservation(2, 0, 0, 0)}},
         {"g", {inliningObservation(3, 1.f, 2.f, 1)}}});
    one_ = buildStream(
        testing::evictionLikeHeader(),
        {{"f",
          {testing::evictionObservation({1, 0, 0, 1}), testing::evictionObservation({0, 1, 0, 1})}},
         {"g", {testing::evictionObservation({1, 1, 1, 1})}},
         {"h", {}}});
    testing::writeFile(fixtures_.path() / "zero.stream", zero_);
    testing::writeFile(fixtures_.path() / "one.stream", one_);
  }

  void TearDown() override {
    fixtures_.remove();
    EXPECT_EQ(testing::childProcesses(), 0u);
    EXPECT_EQ(testing::openDescriptors(), fds_);
  }

  /// Starts the fake compiler on a script with `lines`, with channel 1 beside
  /// the fake command's channel 0.
  std::unique_ptr<CompilerSession> start(const std::vector<std::string>& lines,
                                         SessionLimits limits = {}) {
    auto script = testing::writeScript(fixtures_.path(), "module", lines);
    auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
    EXPECT_TRUE(dir.ok());
    auto command = testing::fakeCommand(dir->path(), script);
    command.extraChannels = {dir->path() / "second"};
    command.argv.push_back("-mllvm");
    command.argv.push_back("-regalloc-evict-interactive-channel-base=" +
                           command.extraChannels[0].string());
    limits.scope = &scope_;
    auto session = startCompilerSession(std::move(*dir), command, limits);
    EXPECT_TRUE(session.ok()) << session.error().message();
    return session.ok() ? std::move(*session) : nullptr;
  }

  /// Whether the fake compiler made `name` (in the fixtures) within 30 s.
  bool madeByTheCompiler(const std::string& name) const {
    auto until = support::Clock::now() + 30s;
    while (!std::filesystem::exists(fixtures_.path() / name) && support::Clock::now() < until)
      std::this_thread::sleep_for(2ms);
    return std::filesystem::exists(fixtures_.path() / name);
  }

  static std::vector<std::byte> advice(int64_t value) {
    std::vector<std::byte> bytes(8);
    std::memcpy(bytes.data(), &value, 8);
    return bytes;
  }

  /// Answers 100 * channel + (questions so far) until the end or an error;
  /// records each question's channel in `channels`.
  static std::optional<Error> drive(CompilerSession& session,
                                    std::vector<size_t>* channels = nullptr) {
    Observation obs;
    for (int i = 0; i < 1000; ++i) {
      auto event = session.next(obs);
      if (!event.ok())
        return event.error();
      if (*event == SessionEvent::kEnd) {
        auto report = session.finish();
        return report.ok() ? std::nullopt : std::optional(report.error());
      }
      if (channels != nullptr)
        channels->push_back(obs.channel);
      if (auto st = session.answer(advice(100 * static_cast<int64_t>(obs.channel) + i)); !st.ok())
        return st.error();
    }
    return makeError(ErrorCode::kInternal, "too many observations");
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir fixtures_;
  std::string zero_, one_;
  size_t fds_ = 0;
};

TEST_F(TwoChannelSessionTest, InterleavedQuestionsAreAnsweredOnTheirChannel) {
  auto session = start({"streams zero.stream one.stream", "order 1 0 0 1 1 0", "object object.o",
                        "answers answers.txt"});
  ASSERT_TRUE(session);
  EXPECT_EQ(session->streamFd(), -1); // next() is the only way with two channels.
  Observation obs;
  std::vector<std::pair<size_t, std::string>> asked;
  for (int64_t i = 0;; ++i) {
    auto event = session->next(obs);
    ASSERT_TRUE(event.ok()) << event.error().message();
    if (*event == SessionEvent::kEnd)
      break;
    asked.emplace_back(obs.channel, std::string(obs.context));
    ASSERT_EQ(obs.tensors.size(), obs.channel == 0 ? 3u : 2u);
    ASSERT_TRUE(session->answer(advice(100 * static_cast<int64_t>(obs.channel) + i)).ok());
  }
  using Asked = std::vector<std::pair<size_t, std::string>>;
  EXPECT_EQ(asked, (Asked{{1, "f"}, {0, "f"}, {0, "f"}, {1, "f"}, {1, "g"}, {0, "g"}}));
  ASSERT_NE(session->channelHeader(0), nullptr);
  ASSERT_NE(session->channelHeader(1), nullptr);
  EXPECT_EQ(*session->channelHeader(0), testing::inliningLikeHeader());
  EXPECT_EQ(*session->channelHeader(1), testing::evictionLikeHeader());
  EXPECT_EQ(session->header(), session->channelHeader(0));
  EXPECT_EQ(session->channelHeader(2), nullptr);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->observations, 6u);
  EXPECT_TRUE(report->channelOpened);
  ASSERT_EQ(report->channels.size(), 2u);
  EXPECT_EQ(report->channels[0].observations, 3u);
  EXPECT_EQ(report->channels[1].observations, 3u);
  EXPECT_EQ(report->channels[0].contexts, (std::vector<std::string>{"f", "g"}));
  EXPECT_EQ(report->channels[1].contexts, (std::vector<std::string>{"f", "g", "h"}));
  EXPECT_EQ(report->contexts, (std::vector<std::string>{"f", "g", "h"}));
  // The fake compiler read each answer on the channel that asked.
  EXPECT_EQ(testing::readFile(fixtures_.path() / "answers.txt"),
            "1 f 0 100\n0 f 0 1\n0 f 1 2\n1 f 1 103\n1 g 0 104\n0 g 0 5\n");
  EXPECT_EQ(testing::readFile(session->command().objectPath), "not really an object");
}

TEST_F(TwoChannelSessionTest, EachChannelIsRecordedToItsOwnFile) {
  SessionLimits limits;
  limits.recordStreamTo = fixtures_.path() / "recorded";
  auto session =
      start({"streams zero.stream one.stream", "order 0 1 0 1 0 1", "object object.o"}, limits);
  ASSERT_TRUE(session);
  std::vector<size_t> channels;
  EXPECT_FALSE(drive(*session, &channels));
  EXPECT_EQ(channels, (std::vector<size_t>{0, 1, 0, 1, 0, 1}));
  session.reset();
  EXPECT_EQ(testing::readFile(fixtures_.path() / "recorded"), zero_);
  EXPECT_EQ(testing::readFile(fixtures_.path() / "recorded.1"), one_);
}

/// Expects the error of a second question while one is pending, and that it sticks.
void expectTwoPending(CompilerSession& session, const Error& error) {
  EXPECT_EQ(error.code(), ErrorCode::kCompiler);
  EXPECT_THAT(error.message(), HasSubstr("channel 0 (" + session.command().channelBase.string()));
  EXPECT_THAT(error.message(),
              HasSubstr("channel 1 (" + session.command().extraChannels[0].string()));
  EXPECT_THAT(error.message(), HasSubstr("one channel at a time"));
  Observation obs;
  EXPECT_EQ(session.next(obs).error().code(), ErrorCode::kCompiler);
  EXPECT_TRUE(session.exitStatus().has_value()); // Killed and reaped.
}

TEST_F(TwoChannelSessionTest, TwoQuestionsArrivingTogetherAreAnError) {
  // After the second question (channel 0) the compiler also asks the third
  // (channel 1) before reading its answer; both are there when next() looks.
  auto session = start({"streams zero.stream one.stream", "order 1 0 1 0 1 0", "fault double 1",
                        "sent sent.flag"});
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  ASSERT_TRUE(session->answer(advice(1)).ok());
  ASSERT_TRUE(madeByTheCompiler("sent.flag"));
  auto event = session->next(obs);
  ASSERT_FALSE(event.ok());
  expectTwoPending(*session, event.error());
}

TEST_F(TwoChannelSessionTest, AQuestionOnAnotherChannelBeforeTheAnswerIsAnError) {
  // The third question comes once the second was read (the go file): next()
  // returns the second alone, and answer() finds the third.
  auto session = start({"streams zero.stream one.stream", "order 1 0 1 0 1 0",
                        "fault double-late 1", "go go.flag", "sent sent.flag"});
  ASSERT_TRUE(session);
  Observation obs;
  ASSERT_EQ(*session->next(obs), SessionEvent::kObservation);
  ASSERT_TRUE(session->answer(advice(1)).ok());
  auto event = session->next(obs);
  ASSERT_TRUE(event.ok()) << event.error().message();
  EXPECT_EQ(obs.channel, 0u);
  testing::writeFile(fixtures_.path() / "go.flag", "");
  ASSERT_TRUE(madeByTheCompiler("sent.flag"));
  auto st = session->answer(advice(1));
  ASSERT_FALSE(st.ok());
  expectTwoPending(*session, st.error());
}

TEST_F(TwoChannelSessionTest, AChannelNeverOpenedEndsWithTheCompiler) {
  auto session = start({"streams zero.stream -", "order 0 0 0", "object object.o"});
  ASSERT_TRUE(session);
  std::vector<size_t> channels;
  Observation obs;
  for (;;) {
    auto event = session->next(obs);
    ASSERT_TRUE(event.ok()) << event.error().message();
    if (*event == SessionEvent::kEnd)
      break;
    channels.push_back(obs.channel);
    ASSERT_TRUE(session->answer(advice(0)).ok());
  }
  EXPECT_EQ(channels, (std::vector<size_t>{0, 0, 0}));
  EXPECT_EQ(session->channelHeader(1), nullptr);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->channels.size(), 2u);
  EXPECT_TRUE(report->channels[0].opened);
  EXPECT_FALSE(report->channels[1].opened);
  EXPECT_EQ(report->channels[1].observations, 0u);
  EXPECT_TRUE(report->channelOpened);
}

TEST_F(TwoChannelSessionTest, NoChannelOpenedEnds) {
  auto session =
      start({"streams zero.stream one.stream", "order 0", "object object.o", "fault never-open"});
  ASSERT_TRUE(session);
  Observation obs;
  auto event = session->next(obs);
  ASSERT_TRUE(event.ok()) << event.error().message();
  EXPECT_EQ(*event, SessionEvent::kEnd);
  auto report = session->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_FALSE(report->channelOpened);
  ASSERT_EQ(report->channels.size(), 2u);
  EXPECT_FALSE(report->channels[0].opened || report->channels[1].opened);
}

TEST_F(TwoChannelSessionTest, DeathMidStreamIsACompilerError) {
  auto session = start({"streams zero.stream one.stream", "order 1 0 0 1 1 0", "fault crash 3"});
  ASSERT_TRUE(session);
  std::vector<size_t> channels;
  auto error = drive(*session, &channels);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kCompiler);
  EXPECT_THAT(error->message(), HasSubstr("signal 11"));
  EXPECT_EQ(channels, (std::vector<size_t>{1, 0, 0, 1})); // The 4th question came, then death.
}

TEST_F(TwoChannelSessionTest, HangOnEitherChannelTimesOut) {
  SessionLimits limits;
  // Long enough for a loaded machine (sanitizers, parallel tests) to send
  // the three observations before the hang; the bound below stays well
  // under the default timeout.
  limits.compileTimeout = 2s;
  auto session = start(
      {"streams zero.stream one.stream", "order 1 0 0 1 1 0", "fault hang 2", "object object.o"},
      limits);
  ASSERT_TRUE(session);
  auto started = support::Clock::now();
  auto error = drive(*session);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kTimeout);
  EXPECT_THAT(error->message(), HasSubstr("after 3 observations"));
  EXPECT_LT(support::Clock::now() - started, 10s);
}

TEST_F(TwoChannelSessionTest, ObservationCapCountsEveryChannel) {
  SessionLimits limits;
  limits.maxObservations = 4;
  auto session =
      start({"streams zero.stream one.stream", "order 0 1 0 1 0 1", "object object.o"}, limits);
  ASSERT_TRUE(session);
  std::vector<size_t> channels;
  auto error = drive(*session, &channels);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), ErrorCode::kCompiler);
  EXPECT_THAT(error->message(), HasSubstr("observation cap"));
  EXPECT_EQ(channels.size(), 4u);
}

TEST_F(TwoChannelSessionTest, BadChannelListsAreRejectedLeavingNothing) {
  auto script = testing::writeScript(fixtures_.path(), "module", {"object object.o"});
  for (int variant = 0; variant < 3; ++variant) {
    auto dir = support::TempDir::create(scope_, "mlgo-env-session-");
    ASSERT_TRUE(dir.ok());
    std::filesystem::path path = dir->path();
    auto command = testing::fakeCommand(path, script);
    if (variant == 0) {
      command.extraChannels = {path / "second"};
      command.channelBase.clear();
    } else if (variant == 1) {
      command.extraChannels = {command.channelBase};
    } else {
      for (size_t i = 0; i <= kMaxExtraChannels; ++i)
        command.extraChannels.push_back(path / ("extra" + std::to_string(i)));
    }
    SessionLimits limits;
    limits.scope = &scope_;
    auto session = startCompilerSession(std::move(*dir), command, limits);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(session.error().message(), HasSubstr(variant == 0   ? "channel base"
                                                     : variant == 1 ? "twice"
                                                                    : "at most"));
    EXPECT_FALSE(std::filesystem::exists(path)) << variant;
  }
}

} // namespace
} // namespace mlgo::env
