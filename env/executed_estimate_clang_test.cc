//===- env/executed_estimate_clang_test.cc - the `executed` estimate -------===//
///
/// With the real clang-22: a one-block function's estimate is its instruction
/// count as llvm-objdump-22 lists it; a loop's function is its blocks'
/// instructions weighed by the frequencies llvm-readobj-22 lists; with a
/// profile each function weighs its entry count (one the workload never
/// called weighs nothing); without one each weighs 1; a split function and
/// bad objects are clear errors.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/executed_estimate.h"

#include "mlgo/env/run_compile.h"
#include "testing/test_util.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr std::string_view kSource = R"(
int g(int);
int hot(int n) { int s = 0; for (int i = 0; i < n; i++) s += g(i); return s; }
int cold(int n) { int s = 0; for (int i = 0; i < n; i++) s += g(i) * 3; return s; }
int small(int x) { return x * 3 + 1; }
)";
constexpr std::string_view kMain = R"(
int hot(int n);
int g(int i) { return i & 7; }
int main(void) { int s = 0; for (int k = 0; k < 10; k++) s += hot(100); return s == 0; }
)";

std::string run(std::vector<std::string> argv, std::vector<std::string> environment = {}) {
  support::CleanupScope scope; // Outlives what is registered in it.
  CompileCommand command;
  command.argv = std::move(argv);
  command.environment = std::move(environment);
  auto report = runCompile(scope, command, 60s);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return report.ok() ? report->output : "";
}

/// Instructions per function in `llvm-objdump-22 -d` of `object`.
std::map<std::string, int> objdumpCounts(const fs::path& object) {
  std::istringstream in(run({"llvm-objdump-22", "-d", "--no-show-raw-insn", object.string()}));
  std::map<std::string, int> counts;
  std::string line, function;
  while (std::getline(in, line)) {
    size_t open = line.find(" <");
    if (open != std::string::npos && line.ends_with(">:"))
      function = line.substr(open + 2, line.size() - open - 4);
    else if (!function.empty() && line.find(':') != std::string::npos && line.starts_with(" "))
      ++counts[function];
  }
  return counts;
}

std::map<std::string, double> byFunction(const ModuleScore& score) {
  return {score.contexts.begin(), score.contexts.end()};
}

class ExecutedEstimate : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-executed-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    testing::writeFile(dir_.path() / "s.c", kSource);
    testing::writeFile(dir_.path() / "main.c", kMain);
  }

  /// s.c compiled at -O2 with `more` arguments and the estimate's.
  fs::path compile(const std::string& name, std::vector<std::string> more) {
    fs::path object = dir_.path() / name;
    std::vector<std::string> argv = {MLGO_CLANG, "-O2", "-c", (dir_.path() / "s.c").string(),
                                     "-o", object.string()};
    argv.insert(argv.end(), more.begin(), more.end());
    for (std::string& arg : executedScoreArgs(/*cc1=*/false))
      argv.push_back(std::move(arg));
    run(argv);
    return object;
  }

  /// A profile of a workload that calls hot() ten times and never cold() or
  /// small().
  fs::path profile() {
    fs::path exe = dir_.path() / "instrumented";
    fs::path raw = dir_.path() / "run.profraw";
    fs::path merged = dir_.path() / "run.profdata";
    run({MLGO_CLANG, "-O2", "-fprofile-instr-generate", (dir_.path() / "s.c").string(),
         (dir_.path() / "main.c").string(), "-o", exe.string()});
    run({exe.string()}, {"LLVM_PROFILE_FILE=" + raw.string()});
    run({"llvm-profdata-22", "merge", "-o", merged.string(), raw.string()});
    return merged;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
};

TEST_F(ExecutedEstimate, WithoutAProfileEachFunctionWeighsOneEntry) {
  fs::path object = compile("plain.o", {});
  auto score = executedEstimate(object);
  ASSERT_TRUE(score.ok()) << score.error().message();
  auto functions = byFunction(*score);
  auto listed = objdumpCounts(object);
  ASSERT_EQ(functions.size(), 3u);
  // One block: one entry runs each instruction once.
  EXPECT_DOUBLE_EQ(functions["small"], listed["small"]);
  EXPECT_GT(listed["small"], 0);
  // A loop's body runs more often than the function is entered.
  EXPECT_GT(functions["hot"], listed["hot"]);
  double sum = 0;
  for (const auto& [name, value] : functions)
    sum += value;
  EXPECT_NEAR(score->total, sum, 1e-9 * sum);
}

TEST_F(ExecutedEstimate, BlocksWeighTheirFrequencyAsLlvmReadobjListsThem) {
  fs::path object = compile("plain.o", {});
  auto score = executedEstimate(object);
  ASSERT_TRUE(score.ok()) << score.error().message();
  // Independently: hot()'s blocks (offset, size, frequency) from
  // llvm-readobj-22, their instructions from llvm-objdump-22.
  std::istringstream map(run({"llvm-readobj-22", "--bb-addr-map", object.string()}));
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  std::vector<double> frequencies;
  std::string line;
  bool inHot = false;
  auto number = [&](std::string_view key) {
    std::string text = line.substr(line.find(key) + key.size());
    return std::stoull(text, nullptr, text.starts_with("0x") ? 16 : 10);
  };
  while (std::getline(map, line)) {
    if (line.find("Name: ") != std::string::npos && line.find("At:") == std::string::npos)
      inHot = line.ends_with("Name: hot");
    else if (inHot && line.find("Offset: ") != std::string::npos)
      blocks.emplace_back(number("Offset: "), 0);
    else if (inHot && line.find(" Size: ") != std::string::npos && !blocks.empty())
      blocks.back().second = number("Size: ");
    else if (inHot && line.find("Frequency: ") != std::string::npos)
      frequencies.push_back(static_cast<double>(number("Frequency: ")));
  }
  ASSERT_GT(blocks.size(), 2u) << "hot() has a loop";
  ASSERT_EQ(frequencies.size(), blocks.size());
  std::istringstream listing(run({"llvm-objdump-22", "-d", "--no-show-raw-insn",
                                  "--disassemble-symbols=hot", object.string()}));
  std::vector<uint64_t> addresses;
  while (std::getline(listing, line))
    if (line.starts_with(" ") && line.find(':') != std::string::npos)
      addresses.push_back(std::stoull(line.substr(0, line.find(':')), nullptr, 16));
  double expected = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    uint64_t inside = 0;
    for (uint64_t a : addresses)
      inside += a >= blocks[b].first && a < blocks[b].first + blocks[b].second;
    expected += frequencies[b] / frequencies[0] * static_cast<double>(inside);
  }
  EXPECT_NEAR(byFunction(*score).at("hot"), expected, 1e-9 * expected);
}

TEST_F(ExecutedEstimate, AProfileWeighsEachFunctionByItsEntryCount) {
  fs::path object = compile("pgo.o", {"-fprofile-instr-use=" + profile().string()});
  auto score = executedEstimate(object);
  ASSERT_TRUE(score.ok()) << score.error().message();
  auto functions = byFunction(*score);
  ASSERT_EQ(functions.size(), 3u);
  EXPECT_EQ(functions.at("cold"), 0);
  EXPECT_EQ(functions.at("small"), 0);
  // Ten entries, each running the loop's body 100 times.
  EXPECT_GT(functions.at("hot"), 10 * 100);
  EXPECT_DOUBLE_EQ(score->total, functions.at("hot"));
}

TEST_F(ExecutedEstimate, ASplitFunctionIsRefusedNamingIt) {
  // hot()'s blocks the workload never ran go to .text.split.hot.
  fs::path object = compile("split.o", {"-fprofile-instr-use=" + profile().string(),
                                        "-fsplit-machine-functions"});
  auto score = executedEstimate(object);
  ASSERT_FALSE(score.ok());
  EXPECT_EQ(score.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(score.error().message().find("function hot is split"), std::string::npos)
      << score.error().message();
}

TEST_F(ExecutedEstimate, BadObjectsAreClearErrors) {
  fs::path without = dir_.path() / "without.o";
  run({MLGO_CLANG, "-O2", "-c", (dir_.path() / "s.c").string(), "-o", without.string()});
  auto missing = executedEstimate(without);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kParse);
  EXPECT_NE(missing.error().message().find("no block map"), std::string::npos)
      << missing.error().message();
  EXPECT_NE(missing.error().message().find(without.string()), std::string::npos);
  // A block map without frequencies names the function and the flag.
  fs::path bare = dir_.path() / "bare.o";
  run({MLGO_CLANG, "-O2", "-c", (dir_.path() / "s.c").string(), "-o", bare.string(),
       "-fbasic-block-address-map"});
  auto frequencies = executedEstimate(bare);
  ASSERT_FALSE(frequencies.ok());
  EXPECT_EQ(frequencies.error().code(), ErrorCode::kParse);
  EXPECT_NE(frequencies.error().message().find("no block frequencies"), std::string::npos)
      << frequencies.error().message();
  EXPECT_NE(frequencies.error().message().find("function "), std::string::npos);
  EXPECT_EQ(executedEstimate(dir_.path() / "nothing.o").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(executedEstimate(dir_.path() / "s.c").error().code(), ErrorCode::kParse);
}

TEST_F(ExecutedEstimate, AnObjectWithoutCodeScoresZero) {
  testing::writeFile(dir_.path() / "data.c", "int table[4] = {1, 2, 3, 4};\n");
  fs::path object = dir_.path() / "data.o";
  std::vector<std::string> argv = {MLGO_CLANG, "-O2", "-c", (dir_.path() / "data.c").string(),
                                   "-o", object.string()};
  for (std::string& arg : executedScoreArgs(/*cc1=*/false))
    argv.push_back(std::move(arg));
  run(argv);
  auto score = executedEstimate(object);
  ASSERT_TRUE(score.ok()) << score.error().message();
  EXPECT_EQ(score->total, 0);
  EXPECT_TRUE(score->contexts.empty());
}

} // namespace
} // namespace mlgo::env
