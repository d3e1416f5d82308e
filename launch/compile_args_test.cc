//===- launch/compile_args_test.cc - which calls the launcher takes ---------===//
#include "mlgo/launch/compile_args.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace mlgo::launch {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

CallKind classify(const std::string& line) {
  return classifyCall(split(line));
}

TEST(CompileArgsTest, TakesCompilesOfOneSupportedSource) {
  for (const char* line :
       {"-c foo.c",
        "-O2 -g -c foo.c -o foo.o",
        "-c -o obj/a.o src/a.cpp",
        "-DX=1 -I include -isystem /usr/include/x -MD -MF a.d -MT a.o -c a.cc -o a.o",
        "-c a.C",
        "-c -x c weird.txt -o w.o",
        "-xc++ -c weird -o w.o",
        "-c a.ii",
        "-c a.i",
        "-Xclang -fembed-bitcode=all -c a.c -o a.o",
        "-mllvm -some-flag -c a.c",
        "-c a.m",
        "-c a.mm",
        "-c a.ll",
        "-c a.bc",
        "-Wl,-z,now -c a.c",
        "-c -- a.c",
        "-target x86_64-linux-gnu -c a.c",
        "-MD -c a.c",
        "-flto=thin -c a.c"}) {
    CallKind kind = classify(line);
    EXPECT_TRUE(kind.interactive) << line << ": " << kind.reason;
  }
  EXPECT_EQ(classify("-c -o x.o src/a.cpp").source, "src/a.cpp");
  EXPECT_EQ(classify("-I inc -c a.c -o a.o").source, "a.c");
}

TEST(CompileArgsTest, PassesEverythingElseThrough) {
  struct Case {
    const char* line;
    const char* reason;
  };
  for (const Case& c : {Case{"a.o b.o -o prog", "a link without sources"},
                        Case{"-o prog", "a link without sources"},
                        Case{"-E a.c", "-E"},
                        Case{"-E -c a.c", "-E"},
                        Case{"-S -c a.c", "-S"},
                        Case{"-M a.c", "-M"},
                        Case{"-MM -c a.c", "-MM"},
                        Case{"-fsyntax-only a.c", "-fsyntax-only"},
                        Case{"--version", "--version"},
                        Case{"-### -c a.c", "-###"},
                        Case{"-print-file-name=libc.so", "-print-file-name=libc.so"},
                        Case{"-save-temps -c a.c", "-save-temps"},
                        Case{"-save-temps=obj -c a.c", "-save-temps=obj"},
                        Case{"-cc1 -emit-obj a.c", "-cc1"},
                        Case{"-c", "0 inputs"},
                        Case{"-c -", "standard input"},
                        Case{"-c a.s", "unsupported input a.s"},
                        Case{"-c a.S", "unsupported input a.S"},
                        Case{"-c a.h", "unsupported input a.h"},
                        Case{"-c noextension", "unsupported input noextension"},
                        Case{"-c dir.d/noext", "unsupported input dir.d/noext"},
                        Case{"-x assembler -c a.c", "language assembler"},
                        Case{"-x c-header -c a.h", "language c-header"},
                        Case{"-c @args.rsp", "a response file (@args.rsp)"},
                        Case{"-c -UnknownSeparate value a.c",
                             "value in a compile of several sources: not a C/C++ source"}}) {
    CallKind kind = classify(c.line);
    EXPECT_FALSE(kind.interactive) << c.line;
    EXPECT_FALSE(kind.split) << c.line;
    EXPECT_EQ(kind.reason, c.reason) << c.line;
  }
  // -x none goes back to the extension.
  EXPECT_FALSE(classify("-x c -x none -c weird").interactive);
  EXPECT_TRUE(classify("-x assembler -x none -c a.c").interactive);
}

TEST(CompileArgsTest, NamesTheObjectAndTheOptimisationLevel) {
  CallKind kind = classify("-O2 -Isrc -c src/a.c -o obj/a.o -Oz");
  EXPECT_EQ(kind.output, "obj/a.o");
  EXPECT_EQ(kind.optLevel, "-Oz"); // the last one counts, as for the compiler
  EXPECT_EQ(classify("-c a.c -oout.o").output, "out.o");
  EXPECT_EQ(classify("-c a.c").optLevel, "-O0");
  EXPECT_EQ(classify("-O -c a.c").optLevel, "-O1");
  EXPECT_EQ(classify("-O9 -c a.c").optLevel, "-O3");
  EXPECT_EQ(classify("-O02 -c a.c").optLevel, "-O2");
  EXPECT_EQ(classify("-Ofast -c a.c").optLevel, "-Ofast");
  EXPECT_EQ(classify("-c a.c -o a.o -objcmt-migrate-literals").output, "a.o");
}

} // namespace
} // namespace mlgo::launch
