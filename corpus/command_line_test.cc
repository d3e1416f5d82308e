//===- corpus/command_line_test.cc - recompile command lines --------------===//
#include "mlgo/corpus/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using namespace std::string_literals;

ModuleSpec makeModule(std::vector<std::string> args) {
  ModuleSpec module;
  module.name = "lib/m.o";
  module.bitcodePath = "/c/lib/m.o.bc";
  module.args = std::move(args);
  return module;
}

TEST(ParseCommandFile, SplitsOnNulAndDropsEmpties) {
  auto args = parseCommandFile("-cc1\0-O2\0\0-triple\0x86_64\0"s, "m.cmd");
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("-cc1", "-O2", "-triple", "x86_64"));
}

TEST(ParseCommandFile, RejectsMissingCc1) {
  auto args = parseCommandFile("-O2\0-c\0"s, "lib/m.o.cmd");
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.error().code(), ErrorCode::kParse);
  EXPECT_THAT(args.error().message(), HasSubstr("lib/m.o.cmd"));
  EXPECT_THAT(args.error().message(), HasSubstr("-cc1"));
}

TEST(ParseCommandFile, RejectsEmpty) {
  auto args = parseCommandFile(std::string("\0\0", 2), "e.cmd");
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.error().message(), HasSubstr("empty"));
}

TEST(RecompileArgs, AppliesStandardDeletionsInBothForms) {
  ModuleSpec module =
      makeModule({"-cc1", "-O2", "-fembed-bitcode=all", "-split-dwarf-file", "a.dwo",
                  "-split-dwarf-output", "a.dwo", "-dependency-file", "a.d", "-MT", "a.o",
                  "-sys-header-deps", "-MP", "-fthinlto-index=x.thinlto.bc",
                  "-fprofile-sample-use=p.prof", "-fprofile-remapping-file=r.txt", "-emit-obj"});
  auto args = recompileArgs(module, "/tmp/out.o");
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("-cc1", "-O2", "-emit-obj", "-x", "ir", "/c/lib/m.o.bc", "-o",
                                 "/tmp/out.o"));
}

TEST(RecompileArgs, DropsTheInteractiveFlagsOfALaunchedCompile) {
  ModuleSpec module = makeModule({"-cc1", "-Oz", "-mllvm", "-enable-ml-inliner=release", "-mllvm",
                                  "-inliner-interactive-channel-base=/tmp/gone/channel", "-mllvm",
                                  "-inliner-interactive-include-default", "-mllvm",
                                  "-ml-advisor-size-increase-threshold=100", "-mllvm",
                                  "-regalloc-enable-advisor=release", "-mllvm",
                                  "-regalloc-evict-interactive-channel-base=/tmp/gone/c2", "-mllvm",
                                  "-unroll-count=2", "-emit-obj"});
  auto args = recompileArgs(module, "/tmp/out.o");
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("-cc1", "-Oz", "-mllvm", "-unroll-count=2", "-emit-obj", "-x",
                                 "ir", "/c/lib/m.o.bc", "-o", "/tmp/out.o"));
}

TEST(RecompileArgs, StandardDeletionsMatchWholeFlagsOnly) {
  // -MTfoo is not -MT, and -fembed-bitcode-marker-like spellings of other
  // flags must survive; only exact or `flag=` matches are deleted.
  ModuleSpec module = makeModule({"-cc1", "-MTx", "-split-dwarf-filename", "keep"});
  auto args = recompileArgs(module, "o.o");
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(*args, ElementsAre("-cc1", "-MTx", "-split-dwarf-filename", "keep", "-x", "ir",
                                 "/c/lib/m.o.bc", "-o", "o.o"));
}

TEST(RecompileArgs, UserDeleteHandlesJoinedAndSeparateValues) {
  ModuleSpec module = makeModule(
      {"-cc1", "-fdebug-prefix-map=a=b", "-mllvm", "-foo", "-O2", "-coverage-data-file", "x.gcda"});
  FlagRules rules;
  rules.deleteFlags = {"-fdebug-prefix-map", "-coverage-data-file"};
  auto args = recompileArgs(module, "o.o", rules);
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAre("-cc1", "-mllvm", "-foo", "-O2", "-x", "ir", "/c/lib/m.o.bc", "-o",
                                 "o.o"));
}

TEST(RecompileArgs, ReplaceKeepsTheSpellingAndExpandsContext) {
  ModuleSpec module =
      makeModule({"-cc1", "-fprofile-instrument-use-path=old.prof", "-main-file-name", "m.c"});
  FlagRules rules;
  rules.replaceFlags = {{"-fprofile-instrument-use-path", "{context.module_full_path}.prof"},
                        {"-main-file-name", "new.c"}};
  auto args = recompileArgs(module, "o.o", rules);
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args,
              ElementsAre("-cc1", "-fprofile-instrument-use-path=/c/lib/m.o.bc.prof",
                          "-main-file-name", "new.c", "-x", "ir", "/c/lib/m.o.bc", "-o", "o.o"));
}

TEST(RecompileArgs, ReplaceMustMatchExactlyOnce) {
  FlagRules rules;
  rules.replaceFlags = {{"-fmissing", "v"}};
  auto none = recompileArgs(makeModule({"-cc1", "-O2"}), "o.o", rules);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(none.error().message(), HasSubstr("matched 0"));

  rules.replaceFlags = {{"-fx", "v"}};
  auto twice = recompileArgs(makeModule({"-cc1", "-fx=1", "-fx=2"}), "o.o", rules);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.error().message(), HasSubstr("matched 2"));
}

TEST(RecompileArgs, AddsFlagsThenInputThenThinLtoThenOutput) {
  ModuleSpec module = makeModule({"-cc1", "-O2", "-fthinlto-index=old.bc"});
  module.thinLtoIndexPath = "/c/lib/m.o.thinlto.bc";
  FlagRules rules;
  rules.addFlags = {"-mllvm", "-extra"};
  auto args = recompileArgs(module, "o.o", rules);
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_THAT(*args, ElementsAreArray({"-cc1", "-O2", "-mllvm", "-extra", "-x", "ir",
                                       "/c/lib/m.o.bc", "-fthinlto-index=/c/lib/m.o.thinlto.bc",
                                       "-mllvm", "-thinlto-assume-merged", "-o", "o.o"}));
}

TEST(RecompileArgs, WorksOnOverrideArguments) {
  ModuleSpec module = makeModule({"-O2", "-c"});
  module.argsFromOverride = true;
  auto args = recompileArgs(module, "o.o");
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(*args, ElementsAre("-O2", "-c", "-x", "ir", "/c/lib/m.o.bc", "-o", "o.o"));
}

TEST(FlagRules, RejectsContradictionsAndReservedFlags) {
  auto expectInvalid = [](const FlagRules& rules, std::string_view what) {
    Status status = validateFlagRules(rules);
    ASSERT_FALSE(status.ok()) << what;
    EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument) << what;
  };
  expectInvalid({{"-fa"}, {{"-fa", "x"}}, {}}, "delete + replace");
  expectInvalid({{}, {{"-fa", "x"}}, {"-fa=1"}}, "add + replace");
  expectInvalid({{"-fa"}, {}, {"-fa"}}, "add + delete");
  expectInvalid({{}, {{"-fa", "x"}, {"-fa", "y"}}, {}}, "replaced twice");
  expectInvalid({{""}, {}, {}}, "empty flag");
  expectInvalid({{"fa"}, {}, {}}, "no dash");
  expectInvalid({{}, {{"-fthinlto-index", "x"}}, {}}, "thinlto index");
  expectInvalid({{"-o"}, {}, {}}, "-o");
  expectInvalid({{}, {}, {"-x"}}, "-x");
  EXPECT_TRUE(validateFlagRules({{"-fa"}, {{"-fb", "v"}}, {"-fc"}}).ok());
}

TEST(FlagRules, ParsesReplaceSpellings) {
  std::vector<std::string> replace = {"-fb=v=w"};
  auto rules = parseFlagRules({"-fa"}, replace, {"-fc"});
  ASSERT_TRUE(rules.ok()) << rules.error().message();
  ASSERT_EQ(rules->replaceFlags.size(), 1u);
  EXPECT_EQ(rules->replaceFlags[0].first, "-fb");
  EXPECT_EQ(rules->replaceFlags[0].second, "v=w");

  std::vector<std::string> bad = {"-fb"};
  auto invalid = parseFlagRules({}, bad, {});
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.error().message(), HasSubstr("FLAG=VALUE"));
}

TEST(StandardDeletedFlags, ListsTheDocumentedFlags) {
  auto flags = standardDeletedFlags();
  std::vector<std::string_view> list(flags.begin(), flags.end());
  EXPECT_THAT(list,
              ::testing::IsSupersetOf(
                  {"-fembed-bitcode", "-split-dwarf-file", "-split-dwarf-output", "-fthinlto-index",
                   "-fprofile-sample-use", "-fprofile-remapping-file", "-dependency-file"}));
}

} // namespace
} // namespace mlgo::corpus
