//===- corpus/build_hints_test.cc - why a build compiled nothing ----------===//
///
/// What the hints find: a failed build, configure checks only, a CMake
/// build directory configured before (named by `-C` or `--build`), a
/// build.ninja generated before, compilers named by absolute path in a
/// Makefile or on the command line; the general reasons come last.
///
//===----------------------------------------------------------------------===//
#include "build_hints.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::corpus::detail {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::writeFile;

TEST(BuildHints, NothingFoundGivesTheGeneralReasons) {
  TempDir dir;
  std::vector<std::string> hints = explainNothingCaught({{"make"}, dir.path(), 0, 0});
  ASSERT_EQ(hints.size(), 3u);
  EXPECT_THAT(hints[0], HasSubstr("up to date"));
  EXPECT_THAT(hints[1], HasSubstr("absolute path"));
  EXPECT_THAT(hints[2], HasSubstr("sccache"));
}

TEST(BuildHints, AFailedBuildAndConfigureChecksComeFirst) {
  TempDir dir;
  std::vector<std::string> hints = explainNothingCaught({{"make"}, dir.path(), 2, 3});
  ASSERT_GE(hints.size(), 2u);
  EXPECT_THAT(hints[0], HasSubstr("the build failed (exit code 2)"));
  EXPECT_THAT(hints[1], HasSubstr("3 compile(s) came through, all configure checks"));
  EXPECT_THAT(hints, Not(Contains(HasSubstr("up to date")))); // It did not succeed.
}

TEST(BuildHints, ACMakeDirectoryConfiguredBeforeIsNamedWithItsCompilers) {
  TempDir dir;
  writeFile(dir / "b/CMakeCache.txt", "# This is the CMakeCache file.\n"
                                      "CMAKE_CXX_COMPILER:STRING=/usr/bin/c++\n"
                                      "CMAKE_C_COMPILER:FILEPATH=/usr/bin/cc\n");
  writeFile(dir / "b/Makefile", "all:\n\t/usr/bin/cc -c x.c\n"); // Generated: not scanned.
  for (std::vector<std::string> command : {std::vector<std::string>{"cmake", "--build", "b"},
                                           {"make", "-Cb"},
                                           {"ninja", "-C", (dir / "b").string()}}) {
    std::vector<std::string> hints = explainNothingCaught({command, dir.path(), 0, 0});
    EXPECT_THAT(hints, Contains(AllOf(HasSubstr((dir / "b/CMakeCache.txt").string()),
                                      HasSubstr("C compiler /usr/bin/cc and C++ compiler "
                                                "/usr/bin/c++"),
                                      HasSubstr("configure a fresh build directory"))))
        << command[0];
    EXPECT_THAT(hints, Not(Contains(HasSubstr("names a compiler by absolute path"))));
    EXPECT_THAT(hints, Not(Contains(HasSubstr("compilers called by absolute path"))));
  }
}

TEST(BuildHints, ABuildNinjaGeneratedBeforeIsNamed) {
  TempDir dir;
  writeFile(dir / "out/build.ninja", "rule cc\n  command = /usr/lib/ccache/gcc-12 -c $in\n");
  std::vector<std::string> hints = explainNothingCaught({{"ninja", "-C", "out"}, dir.path(), 0, 0});
  EXPECT_THAT(hints, Contains(AllOf(HasSubstr((dir / "out/build.ninja").string()),
                                    HasSubstr("generated before"))));
  EXPECT_THAT(hints, Contains(HasSubstr("by absolute path (/usr/lib/ccache/gcc-12)")));
}

TEST(BuildHints, AbsoluteCompilerPathsInAMakefileOrTheCommand) {
  TempDir dir;
  writeFile(dir / "Makefile", "CC=/usr/bin/gcc\nCXX = \"/opt/x/bin/clang++-22\"\n"
                              "AR=/usr/bin/gcc-ar\nall:\n\t/usr/bin/gcc -c a.c\n"
                              "\t/usr/bin/cc -c b.c; /usr/bin/c99 -c c.c\n");
  std::vector<std::string> hints = explainNothingCaught({{"make"}, dir.path(), 0, 0});
  EXPECT_THAT(hints, Contains(AllOf(HasSubstr((dir / "Makefile").string()),
                                    HasSubstr("by absolute path (/usr/bin/gcc, "
                                              "/opt/x/bin/clang++-22, /usr/bin/cc)"))));
  // Found, so the general line about absolute paths is left out.
  EXPECT_THAT(hints, Not(Contains(HasSubstr("compilers called by absolute path"))));

  TempDir empty;
  hints = explainNothingCaught({{"make", "CC=/usr/bin/gcc-12", "CXX=g++"}, empty.path(), 0, 0});
  EXPECT_THAT(hints, Contains(AllOf(HasSubstr("the build command"),
                                    HasSubstr("by absolute path (/usr/bin/gcc-12)"))));
}

} // namespace
} // namespace mlgo::corpus::detail
