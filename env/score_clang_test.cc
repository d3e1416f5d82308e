//===- env/score_clang_test.cc - scores checked against LLVM's tools -------===//
///
/// The in-process scores must agree with what llvm-readelf and
/// llvm-remarkutil report for the same files.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/run_compile.h"
#include "mlgo/env/score.h"

#include "mlgo/env/compiler_session.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace mlgo::env {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr std::string_view kSource = R"(
double mix(double *a, double *b, int n) {
  double s0=0,s1=0,s2=0,s3=0,s4=0,s5=0,s6=0,s7=0,s8=0,s9=0,s10=0,s11=0,s12=0,s13=0,s14=0,s15=0,s16=0,s17=0;
  for (int i = 0; i < n; i++) {
    double x = a[i], y = b[i];
    s0 += x*y; s1 += x-y; s2 += x/y; s3 += x*x; s4 += y*y; s5 += s0*x; s6 += s1*y; s7 += s2*s3;
    s8 += s4*s5; s9 += s6*s7; s10 += s8*x; s11 += s9*y; s12 += s10*s11; s13 += s12*x; s14 += s13*y;
    s15 += s14*s0; s16 += s15*s1; s17 += s16*s2;
  }
  return s0+s1+s2+s3+s4+s5+s6+s7+s8+s9+s10+s11+s12+s13+s14+s15+s16+s17;
}
int small(int x) { return x * 3 + 1; }
)";

std::string run(std::vector<std::string> argv) {
  support::CleanupScope scope; // Outlives what is registered in it.
  CompileCommand command;
  command.argv = std::move(argv);
  auto report = runCompile(scope, command, 60s);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return report.ok() ? report->output : "";
}

class ScoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-score-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    testing::writeFile(dir_.path() / "s.c", kSource);
    object_ = dir_.path() / "s.o";
    remarks_ = dir_.path() / "s.opt";
    run({MLGO_CLANG, "-O2", "-c", (dir_.path() / "s.c").string(), "-o", object_.string(),
         "-fsave-optimization-record=bitstream", "-foptimization-record-passes=regalloc",
         "-foptimization-record-file=" + remarks_.string()});
  }
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
  fs::path object_, remarks_;
};

TEST_F(ScoreTest, ExecutableBytesMatchLlvmReadelf) {
  auto bytes = executableSectionBytes(object_);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  // Sum the sizes of sections flagged X in `llvm-readelf -S -W`.
  auto expected = testing::parseReadelfExecutable(
      run({"llvm-readelf-22", "-S", "-W", object_.string()}));
  EXPECT_GT(expected.sections, 0);
  EXPECT_GT(*bytes, 0u);
  EXPECT_EQ(*bytes, expected.bytes);
}

TEST_F(ScoreTest, RegallocCostsMatchLlvmRemarkutil) {
  auto costs = readRegallocRemarks(remarks_);
  ASSERT_TRUE(costs.ok()) << costs.error().message();
  // Independent reading: llvm-remarkutil's YAML, key by key.
  std::istringstream yaml(run({"llvm-remarkutil-22", "bitstream2yaml", remarks_.string()}));
  std::map<std::string, double> expected;
  std::string line, name, function;
  while (std::getline(yaml, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("Name:", 0) == 0)
      name = value().substr(value().find_first_not_of(' '));
    else if (line.rfind("Function:", 0) == 0)
      function = value().substr(value().find_first_not_of(' '));
    else if (name == "SpillReloadCopies" && line.find("Cost:") != std::string::npos) {
      std::string key = line.substr(line.find("- ") + 2, line.find(':') - line.find("- ") - 2);
      std::string number = value();
      number = number.substr(number.find('\'') + 1);
      double v = std::stod(number);
      double weight = key.find("Reloads") != std::string::npos  ? 4.0
                      : key.find("Spills") != std::string::npos ? 1.0
                                                                : 0.2;
      expected[function] += weight * v;
    }
  }
  ASSERT_FALSE(expected.empty());
  ModuleScore score = regallocScore(*costs);
  double total = 0;
  for (const auto& [f, v] : expected)
    total += v;
  ASSERT_EQ(score.contexts.size(), expected.size());
  for (const auto& [f, v] : score.contexts)
    EXPECT_NEAR(v, expected[f], 1e-9 * (1 + v)) << f;
  EXPECT_NEAR(score.total, total, 1e-9 * total);
  EXPECT_GT(score.total, 0); // The test program does spill.
}

TEST_F(ScoreTest, BadFilesAreClearErrors) {
  EXPECT_EQ(executableSectionBytes(dir_.path() / "missing.o").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(executableSectionBytes(dir_.path() / "s.c").error().code(), ErrorCode::kParse);
  EXPECT_EQ(readRegallocRemarks(object_).error().code(), ErrorCode::kParse);
}

TEST(RewardTest, RelativeToDefault) {
  EXPECT_NEAR(relativeReward(90, 100), 0.1, 1e-12);
  EXPECT_NEAR(relativeReward(110, 100), -0.1, 1e-12);
  EXPECT_EQ(relativeReward(0, 0), 0.0);
  EXPECT_EQ(relativeReward(5, 0), -1.0);
}

} // namespace
} // namespace mlgo::env
