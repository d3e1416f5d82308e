//===- launch/split_call_test.cc - several sources in one compiler call -----===//
#include "mlgo/launch/split_call.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace mlgo::launch {
namespace {

using Args = std::vector<std::string>;

Args split(const std::string& line) {
  std::istringstream in(line);
  Args out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

TEST(SplitCallTest, TakesSeveralSourcesAndCompileAndLinkApart) {
  struct Case {
    const char* line;
    bool link;
    std::vector<size_t> sources;
  };
  for (const Case& c :
       {Case{"-c a.c b.c", false, {1, 2}},
        Case{"-O2 -c -MMD -MP src/a.c b.cpp x.C", false, {4, 5, 6}},
        Case{"-c -- a.c b.c", false, {2, 3}},
        Case{"-O2 -shared -fPIC a.c b.c -o liblz4.so", true, {3, 4}},
        Case{"-Oz x.c y.o -o prog", true, {1}},
        Case{"-Oz x.c", true, {1}},
        Case{"-Oz x.c libz.a libz.so.1.2.13 ../lib/liblz4.so -lm -L lib -Wl,-z,now -o p", true,
             {1}},
        Case{"-I inc -flto=thin -fuse-ld=lld a.cc b.ll c.bc -o p", true, {4, 5, 6}},
        Case{"-Xclang -fembed-bitcode=all -c a.c b.c", false, {3, 4}}}) {
    Args args = split(c.line);
    CallKind kind = classifyCall(args);
    EXPECT_TRUE(kind.split) << c.line << ": " << kind.reason;
    EXPECT_FALSE(kind.interactive) << c.line;
    EXPECT_EQ(kind.link, c.link) << c.line;
    EXPECT_EQ(kind.sources, c.sources) << c.line;
    EXPECT_EQ(kind.reason, "") << c.line;
  }
}

TEST(SplitCallTest, RefusesWhatItCannotTakeApartSafely) {
  struct Case {
    const char* line;
    const char* reason;
  };
  for (const Case& c :
       {Case{"-x c -c a b", "-x LANGUAGE in a compile of several sources"},
        Case{"-x c a.c -o prog", "-x LANGUAGE in a compile-and-link"},
        Case{"-xc++ a.cc b.o -o prog", "-x LANGUAGE in a compile-and-link"},
        Case{"-c a.c -", "standard input in a compile of several sources"},
        Case{"a.c - -o p", "standard input in a compile-and-link"},
        Case{"-c a.c b.s", "b.s in a compile of several sources: not a C/C++ source"},
        Case{"-c a.c b.o", "b.o in a compile of several sources: not a C/C++ source"},
        Case{"-c a.h b.h", "a.h in a compile of several sources: not a C/C++ source"},
        Case{"a.c b.S -o p", "b.S in a compile-and-link: not a C/C++ source, object or library"},
        Case{"a.c link.ld -o p",
             "link.ld in a compile-and-link: not a C/C++ source, object or library"},
        Case{"a.c prog -o p", "prog in a compile-and-link: not a C/C++ source, object or library"},
        Case{"-o p -- a.c -b.c", "an input named like an option (-b.c) in a compile-and-link"},
        Case{"a.o b.o -o prog", "a link without sources"},
        Case{"-c a.c b.c -o x.o", "-o with 2 sources (the compiler refuses it)"},
        Case{"-c a.c b.c -MF deps.d", "-MF in a compile of several sources"},
        Case{"-c a.c b.c -MFdeps.d", "-MFdeps.d in a compile of several sources"},
        Case{"-MD -MT x -c a.c b.c", "-MT in a compile of several sources"},
        Case{"-c -Wp,-MD,x.d a.c b.c", "-Wp,-MD,x.d in a compile of several sources"},
        Case{"-MD a.c b.c -o p", "-MD in a compile-and-link"},
        Case{"-MMD a.c -o p", "-MMD in a compile-and-link"},
        Case{"-include-pch x.pch -c a.c b.c", "-include-pch in a compile of several sources"},
        Case{"-Xclang -emit-pch -c a.c b.c", "-emit-pch in a compile of several sources"},
        Case{"-emit-llvm -c a.c b.c", "-emit-llvm in a compile of several sources"},
        Case{"-fpch-instantiate-templates a.cc -o p",
             "-fpch-instantiate-templates in a compile-and-link"},
        Case{"-g -gsplit-dwarf a.c -o p", "-gsplit-dwarf in a compile-and-link"},
        Case{"-ftime-trace -c a.c b.c", "-ftime-trace in a compile of several sources"},
        Case{"--coverage a.c -o p", "--coverage in a compile-and-link"},
        Case{"-fprofile-arcs -ftest-coverage a.c -o p", "-fprofile-arcs in a compile-and-link"},
        Case{"-fstack-usage -c a.c b.c", "-fstack-usage in a compile of several sources"},
        Case{"-fsave-optimization-record a.c -o p",
             "-fsave-optimization-record in a compile-and-link"},
        Case{"-dumpdir x- a.c -o p", "-dumpdir in a compile-and-link"},
        Case{"-fmodules -c a.cc b.cc", "-fmodules in a compile of several sources"},
        Case{"-E a.c b.c", "-E"},
        Case{"-save-temps a.c -o p", "-save-temps"},
        Case{"@args.rsp a.c -o p", "a response file (@args.rsp)"}}) {
    CallKind kind = classifyCall(split(c.line));
    EXPECT_FALSE(kind.split) << c.line;
    EXPECT_FALSE(kind.interactive) << c.line;
    EXPECT_TRUE(kind.sources.empty()) << c.line;
    EXPECT_EQ(kind.reason, c.reason) << c.line;
  }
}

TEST(SplitCallTest, CompilesEachSourceAloneWhereTheCompilerPutsItsObject) {
  Args args = split("-O2 -I inc -c a.c -MMD sub/b.c -DX=1");
  CallKind kind = classifyCall(args);
  ASSERT_TRUE(kind.split);
  EXPECT_EQ(objectName("sub/b.c"), "b.o");
  EXPECT_EQ(objectName("a.tar.cpp"), "a.tar.o");
  EXPECT_EQ(compileAlone(args, kind, 0, "a.o"),
            split("-O2 -I inc -c -MMD -DX=1 a.c -o a.o"));
  EXPECT_EQ(compileAlone(args, kind, 1, "b.o"),
            split("-O2 -I inc -c -MMD -DX=1 sub/b.c -o b.o"));
}

TEST(SplitCallTest, CompileAndLinkCompilesToTemporariesAndLinksThemInPlace) {
  Args args = split("-Oz -shared -fPIC a.c y.o lib/b.c -o lib.so -lm -Wl,-z,now");
  CallKind kind = classifyCall(args);
  ASSERT_TRUE(kind.split && kind.link);
  EXPECT_EQ(linkOutput(kind), "lib.so");
  // The compile job clang runs in this call has -dumpdir lib.so-; the link's
  // options go unused in a compile.
  EXPECT_EQ(compileAlone(args, kind, 0, "/t/0-a.o"),
            split("-Oz -shared -fPIC -lm -Wl,-z,now -dumpdir lib.so- -Qunused-arguments -c a.c "
                  "-o /t/0-a.o"));
  EXPECT_EQ(compileAlone(args, kind, 1, "/t/1-b.o"),
            split("-Oz -shared -fPIC -lm -Wl,-z,now -dumpdir lib.so- -Qunused-arguments -c "
                  "lib/b.c -o /t/1-b.o"));
  Args objects = {"/t/0-a.o", "/t/1-b.o"};
  EXPECT_EQ(linkWith(args, kind, objects),
            split("-Oz -shared -fPIC /t/0-a.o y.o /t/1-b.o -o lib.so -lm -Wl,-z,now"));

  Args plain = split("-Oz -oprog -- a.c b.c");
  CallKind noDash = classifyCall(plain);
  ASSERT_TRUE(noDash.split);
  EXPECT_EQ(compileAlone(plain, noDash, 1, "/t/1-b.o"),
            split("-Oz -dumpdir prog- -Qunused-arguments -c b.c -o /t/1-b.o"));
  EXPECT_EQ(linkWith(plain, noDash, objects), split("-Oz -oprog -- /t/0-a.o /t/1-b.o"));

  Args noOutput = split("-Oz x.c");
  CallKind aOut = classifyCall(noOutput);
  EXPECT_EQ(linkOutput(aOut), "a.out");
  EXPECT_EQ(compileAlone(noOutput, aOut, 0, "/t/0-x.o"),
            split("-Oz -dumpdir a- -Qunused-arguments -c x.c -o /t/0-x.o"));
}

} // namespace
} // namespace mlgo::launch
