//===- launch/stale_launch_test.cc - tuned launches whose stream changed ----===//
///
/// runTuned() on the fake compiler (env/testing/fake_compiler.cc), which
/// plays a recorded clang-22 stream (tests/data/streams/inlining.stream, 11
/// decisions, two pairs of identical call sites) whatever the answers, and
/// writes down each answer it got. The table's actions are the opposite of
/// clang's `inlining_default` everywhere, so every answer tells whether it
/// came from the entry or from the fallback.
///
//===----------------------------------------------------------------------===//
#include "mlgo/launch/tuned_launch.h"
#include "mlgo/policy/policy_file.h"
#include "stale_test_util.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace mlgo::launch {
namespace {

using testing::Stream;

const std::filesystem::path kStreams =
    std::filesystem::path(MLGO_SOURCE_DIR) / "tests/data/streams";

CompilerStamp fakeCompiler() {
  std::filesystem::path real = std::filesystem::canonical(MLGO_FAKE_COMPILER);
  struct stat st {};
  EXPECT_EQ(::stat(real.c_str(), &st), 0);
  return CompilerStamp{real.string(), static_cast<uint64_t>(st.st_size),
                       static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                           st.st_mtim.tv_nsec,
                       "fake"};
}

class StaleLaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "stale-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    recorded_ = testing::loadStream(kStreams / "inlining.stream");
    ASSERT_EQ(recorded_.observations.size(), 11u);
    for (size_t i = 0; i < 11; ++i) {
      defaults_.push_back(static_cast<int>(recorded_.get(i, "inlining_default")));
      tuned_.push_back(static_cast<uint8_t>(1 - defaults_.back()));
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// The table: module `module` tuned on the recorded stream.
  void writeTable(const std::string& module = "src/m.o", bool sites = true) {
    testing::writeTable(dir_ / "table", recorded_.features(), fakeCompiler(),
                        {{module, tuned_, testing::hashesOf(recorded_), "-Oz", sites}});
  }

  struct Run {
    TunedOutcome outcome;
    std::vector<int> answers;
    std::string log;
  };

  /// One compile of `stream` through the launcher with the table.
  Run compile(const Stream& stream, const std::string& output = "src/m.o", bool stale = true,
              const policy::Policy* fallback = nullptr) {
    testing::writeFile(dir_ / "m.stream", stream.bytes());
    std::filesystem::remove(dir_ / "answers");
    testing::writeFile(dir_ / "m.script", "mlgo-fake-compiler\nstream m.stream\nanswers answers\n");
    auto table = TuningTable::open(dir_ / "table");
    EXPECT_TRUE(table.ok()) << table.error().message();
    TunedLaunch tuned;
    tuned.table = &*table;
    tuned.fallback = fallback;
    tuned.output = output;
    tuned.optLevel = "-Oz";
    tuned.log = dir_ / "launch.log";
    tuned.stale = stale;
    std::filesystem::remove(tuned.log);
    LaunchOptions options;
    options.command = {MLGO_FAKE_COMPILER, "-Oz", "-c", "-x", "ir", (dir_ / "m.script").string()};
    if (!output.empty())
      options.command.insert(options.command.end(), {"-o", (dir_ / "m.o").string()});
    support::CleanupScope scope;
    auto outcome = runTuned(options, "src/m.c", tuned, scope);
    if (!outcome.ok()) {
      ADD_FAILURE() << outcome.error().message();
      return {};
    }
    Run run{*outcome, {}, testing::readFile(tuned.log)};
    EXPECT_FALSE(run.outcome.outcome.error) << run.outcome.outcome.error->message();
    std::istringstream lines(testing::readFile(dir_ / "answers"));
    std::string id;
    int value = 0;
    while (lines >> id >> value) // the context is "": each line is " <id> <value>"
      run.answers.push_back(value);
    return run;
  }

  /// `stream` with its module-wide features changed from observation `from` on.
  Stream movedFrom(size_t from) const {
    Stream moved = recorded_;
    for (size_t i = from; i < moved.observations.size(); ++i) {
      moved.set(i, "node_count", moved.get(i, "node_count") + 2);
      moved.set(i, "edge_count", moved.get(i, "edge_count") + 5);
    }
    return moved;
  }

  std::filesystem::path dir_;
  Stream recorded_;
  std::vector<int> defaults_;
  std::vector<uint8_t> tuned_;
};

std::vector<int> ints(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

TEST_F(StaleLaunchTest, TheRecordedStreamIsTunedAsBefore) {
  writeTable();
  Run run = compile(recorded_);
  EXPECT_TRUE(run.outcome.tuned);
  EXPECT_FALSE(run.outcome.stale);
  EXPECT_EQ(run.answers, ints(tuned_));
  EXPECT_NE(run.log.find(R"("outcome":"tuned")"), std::string::npos) << run.log;
  EXPECT_EQ(run.log.find("from_entry"), std::string::npos) << run.log;
}

TEST_F(StaleLaunchTest, AnEditElsewhereInTheModuleKeepsEveryDecision) {
  writeTable();
  // From the first decision: no entry has this first observation; the
  // entry is found by the object path.
  Run run = compile(movedFrom(0));
  EXPECT_FALSE(run.outcome.tuned);
  EXPECT_TRUE(run.outcome.stale) << run.outcome.why;
  EXPECT_EQ(run.outcome.module, "src/m.o");
  EXPECT_EQ(run.answers, ints(tuned_));
  EXPECT_EQ(run.outcome.fromEntry, 11u);
  EXPECT_EQ(run.outcome.decisions, 11u);
  EXPECT_NE(run.log.find(R"("outcome":"stale")"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find(R"("from_entry":11)"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("no tuned module makes this first decision"), std::string::npos);
  // From the fifth: the exact route answers, then the stream's hash differs
  // at the end; every site key matched, so no rerun: the answers stand.
  run = compile(movedFrom(4));
  EXPECT_TRUE(run.outcome.stale) << run.outcome.why;
  EXPECT_EQ(run.answers, ints(tuned_));
  EXPECT_EQ(run.outcome.fromEntry, 11u);
  EXPECT_NE(run.outcome.why.find("the compiler's stream differs from the tuned one"),
            std::string::npos)
      << run.outcome.why;
}

TEST_F(StaleLaunchTest, AChangedSiteGetsClangsOwnDecisionAndTheRestTheirs) {
  writeTable();
  Stream edited = movedFrom(0);
  edited.set(5, "callee_basic_block_count", edited.get(5, "callee_basic_block_count") + 1);
  Run run = compile(edited);
  std::vector<int> expected = ints(tuned_);
  expected[5] = defaults_[5];
  EXPECT_EQ(run.answers, expected);
  EXPECT_EQ(run.outcome.fromEntry, 10u);
  EXPECT_EQ(run.outcome.decisions, 11u);
}

TEST_F(StaleLaunchTest, DecisionsGoneAndAddedAreMatchedByKeyAndOccurrence) {
  writeTable();
  // Observations 2 and 3 are the same call site twice (their keys are
  // equal), as are 6 and 7. The first decision is unchanged, so the exact
  // route starts and departs at the second.
  Stream edited = recorded_;
  edited.observations.erase(edited.observations.begin() + 1); // 1 gone
  edited.observations.push_back(recorded_.observations[6]);   // 6/7's site a third time
  edited.observations.push_back(recorded_.observations[2]);   // 2/3's a third time
  Run run = compile(edited);
  std::vector<int> expected = {tuned_[0], tuned_[2], tuned_[3], tuned_[4], tuned_[5],
                               tuned_[6], tuned_[7], tuned_[8], tuned_[9], tuned_[10],
                               defaults_[6], defaults_[2]};
  EXPECT_EQ(run.answers, expected);
  EXPECT_EQ(run.outcome.fromEntry, 10u);
  EXPECT_EQ(run.outcome.decisions, 12u);
  EXPECT_NE(run.outcome.why.find("module 'src/m.o' departs from its tuned stream: decision 1"),
            std::string::npos)
      << run.outcome.why;
}

TEST_F(StaleLaunchTest, APolicyAnswersTheSitesTheTableDoesNotKnow) {
  writeTable();
  int other = 1 - defaults_[5];
  testing::writeFile(dir_ / "policy.json",
                     fmt::format(R"({{"format": "mlgo-env-policy", "version": 1,
 "problem": "inlining", "features": ["threshold"], "transform": "signed-log1p", "mean": [0],
 "std": [1], "layers": [{{"weights": [[0]], "bias": [{}], "activation": "linear"}}],
 "decision": "logit>0"}})",
                                 other ? 1 : -1));
  auto policy = policy::Policy::load(dir_ / "policy.json");
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  Stream edited = movedFrom(0);
  edited.set(5, "callee_basic_block_count", edited.get(5, "callee_basic_block_count") + 1);
  Run run = compile(edited, "src/m.o", true, &*policy);
  std::vector<int> expected = ints(tuned_);
  expected[5] = other;
  EXPECT_EQ(run.answers, expected);
  EXPECT_EQ(run.outcome.fromEntry, 10u);
}

TEST_F(StaleLaunchTest, WithoutTheRouteOrItsKeysAChangedModuleFallsBack) {
  writeTable();
  Run run = compile(movedFrom(0), "src/m.o", /*stale=*/false);
  EXPECT_FALSE(run.outcome.stale);
  EXPECT_EQ(run.answers, defaults_);
  EXPECT_NE(run.log.find(R"("outcome":"fallback")"), std::string::npos) << run.log;
  // A departure at the end reruns the compile plainly.
  run = compile(movedFrom(4), "src/m.o", false);
  EXPECT_FALSE(run.outcome.stale);
  EXPECT_NE(run.outcome.why.find("departs from its tuned decisions: the compiler's stream "
                                 "differs"),
            std::string::npos)
      << run.outcome.why;
  EXPECT_NE(run.log.find(R"("outcome":"fallback")"), std::string::npos) << run.log;
  writeTable("src/m.o", /*sites=*/false); // a table older than site keys
  run = compile(movedFrom(0));
  EXPECT_EQ(run.answers, defaults_);
  EXPECT_NE(run.outcome.why.find("the table has no site keys"), std::string::npos)
      << run.outcome.why;
}

TEST_F(StaleLaunchTest, TheObjectPathMustNameTheModule) {
  writeTable("lib/m.o");
  Run run = compile(movedFrom(0), "src/other.o");
  EXPECT_FALSE(run.outcome.stale);
  EXPECT_EQ(run.answers, defaults_);
  EXPECT_NE(run.outcome.why.find("no module tuned at -Oz is named like 'src/other.o'"),
            std::string::npos)
      << run.outcome.why;
  run = compile(movedFrom(0), ""); // `-c m.c` without -o: the object is m.o
  EXPECT_TRUE(run.outcome.stale) << run.outcome.why;
  EXPECT_EQ(run.answers, ints(tuned_));
  // Every site changed: nothing comes from the entry, so it is a fallback.
  Stream other = movedFrom(0);
  for (size_t i = 0; i < other.observations.size(); ++i)
    other.set(i, "callee_users", other.get(i, "callee_users") + 1);
  run = compile(other, "lib/m.o");
  EXPECT_FALSE(run.outcome.stale);
  EXPECT_EQ(run.answers, defaults_);
  EXPECT_NE(run.log.find(R"("outcome":"fallback")"), std::string::npos) << run.log;
  EXPECT_NE(run.outcome.why.find("no call site of module 'lib/m.o' is in this compile"),
            std::string::npos)
      << run.outcome.why;
}

TEST_F(StaleLaunchTest, ABrokenModuleIndexFailsTheCompileNamingIt) {
  writeTable();
  testing::writeFile(dir_ / "table/module-index.json", "{\"format\": ");
  auto table = TuningTable::open(dir_ / "table");
  ASSERT_TRUE(table.ok());
  testing::writeFile(dir_ / "m.stream", movedFrom(0).bytes());
  testing::writeFile(dir_ / "m.script", "mlgo-fake-compiler\nstream m.stream\n");
  TunedLaunch tuned;
  tuned.table = &*table;
  tuned.output = "src/m.o";
  tuned.optLevel = "-Oz";
  LaunchOptions options;
  options.command = {MLGO_FAKE_COMPILER, "-c", "-x", "ir", (dir_ / "m.script").string()};
  support::CleanupScope scope;
  auto outcome = runTuned(options, "src/m.c", tuned, scope);
  ASSERT_TRUE(outcome.ok());
  ASSERT_TRUE(outcome->outcome.error);
  EXPECT_NE(outcome->outcome.error->message().find("module-index.json': not JSON"),
            std::string::npos)
      << outcome->outcome.error->message();
  EXPECT_NE(outcome->outcome.exitCode, 0);
}

} // namespace
} // namespace mlgo::launch
