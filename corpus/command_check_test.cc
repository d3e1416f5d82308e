//===- corpus/command_check_test.cc - refusing unsafe recompiles ----------===//
#include "mlgo/corpus/command_check.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using ::testing::HasSubstr;

/// A realistic cc1 command as clang embeds it (dependency flags included).
std::vector<std::string> recorded() {
  return {"-cc1", "-triple", "x86_64-pc-linux-gnu", "-O2", "-emit-obj", "-main-file-name",
          "m.c", "-mrelocation-model", "pic", "-pic-level", "2", "-target-cpu", "x86-64",
          "-resource-dir", "/usr/lib/llvm-22/lib/clang/22", "-dependency-file", "m.o.d", "-MT",
          "m.o", "-sys-header-deps", "-I", "/src", "-internal-isystem", "/usr/include",
          "-ferror-limit", "19", "-fembed-bitcode=all", "-faddrsig"};
}

class CommandCheck : public ::testing::Test {
protected:
  ModuleSpec module(std::vector<std::string> args, std::string_view bitcode = "BC\xc0\xde") {
    ModuleSpec m;
    m.name = "lib/m.o";
    m.bitcodePath = dir_ / "lib/m.o.bc";
    testing::writeFile(m.bitcodePath, bitcode);
    m.args = std::move(args);
    return m;
  }
  testing::TempDir dir_;
};

TEST_F(CommandCheck, RecordedCommandsWithTheirDependencyFlagsPass) {
  Status st = checkModule(module(recorded()), {});
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(CommandCheck, EveryWritingFlagIsRefusedInEverySpelling) {
  for (std::string_view flag : writingFlags()) {
    std::string f(flag);
    std::vector<std::vector<std::string>> spellings = {
        {f, "/abs/out"}, {f + "=/abs/out"}, {"-Xclang", f + "=/abs/out"}, {"-mllvm", f}};
    if (flag == "-MD" || flag == "-MMD" || flag == "-save-temps" || flag == "-ftime-trace" ||
        flag == "-fsave-optimization-record")
      spellings.push_back({f});
    for (const auto& extra : spellings) {
      auto args = recorded();
      args.insert(args.end(), extra.begin(), extra.end());
      // Added by the user instead of recorded: refused all the same.
      for (bool added : {false, true}) {
        if (added && flag == "-o")
          continue; // Flag rules may not add -o at all (validateFlagRules).
        auto standard = standardDeletedFlags();
        if (!added && std::find(standard.begin(), standard.end(), flag) != standard.end())
          continue; // Recorded, it is deleted (see the test above); added, refused.
        ModuleSpec m = module(added ? recorded() : args);
        FlagRules rules;
        if (added)
          rules.addFlags = extra;
        Status st = checkModule(m, rules);
        ASSERT_FALSE(st.ok()) << "accepted " << extra.front() << " " << extra.back();
        EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
        EXPECT_THAT(st.error().message(), HasSubstr("module lib/m.o"));
        EXPECT_THAT(st.error().message(), HasSubstr(f));
        if (flag != "-o")
          EXPECT_THAT(st.error().message(), HasSubstr("--delete-flag=" + f));
      }
    }
  }
}

TEST_F(CommandCheck, StatsFileExampleFromTheIssue) {
  auto args = recorded();
  args.push_back("-stats-file=/abs/path");
  Status st = checkModule(module(args), {});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message(), HasSubstr("'-stats-file=/abs/path'"));
  // Deleting it is the way out.
  FlagRules rules;
  rules.deleteFlags = {"-stats-file"};
  Status fixed = checkModule(module(args), rules);
  EXPECT_TRUE(fixed.ok()) << fixed.error().message();
}

TEST_F(CommandCheck, LookalikesOfWritingFlagsPass) {
  auto args = recorded();
  for (const char* a : {"-ftime-trace-granularity=500", "-stats-file-append",
                        "-object-file-name=m.o", "-opt-record-passes", "inline",
                        "-fno-save-optimization-record", "-MP"})
    args.push_back(a);
  Status st = checkModule(module(args), {});
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(CommandCheck, PositionalArgumentsAreRefused) {
  for (auto where : {3, 7, -1}) {
    auto args = recorded();
    auto at = where < 0 ? args.end() : args.begin() + where;
    args.insert(at, "stray.c");
    Status st = checkModule(module(args), {});
    ASSERT_FALSE(st.ok()) << where;
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(st.error().message(), HasSubstr("module lib/m.o"));
    EXPECT_THAT(st.error().message(), HasSubstr("positional argument 'stray.c'"));
  }
  auto added = recorded();
  FlagRules rules;
  rules.addFlags = {"-O2", "input.bc"};
  EXPECT_FALSE(checkModule(module(added), rules).ok());
  // A value behind -Xclang is a value, not a positional argument.
  rules.addFlags = {"-Xclang", "-target-cpu", "-Xclang", "znver3"};
  Status st = checkModule(module(recorded()), rules);
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(CommandCheck, EmptyBitcodeIsRefused) {
  Status st = checkModule(module(recorded(), ""), {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(st.error().message(), HasSubstr("module lib/m.o"));
  EXPECT_THAT(st.error().message(), HasSubstr("empty"));
}

} // namespace
} // namespace mlgo::corpus
