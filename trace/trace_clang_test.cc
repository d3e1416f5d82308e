//===- trace/trace_clang_test.cc - traces with the real clang-22 ---------------===//
///
/// Sampling is reproducible; development-mode clangs are detected and their
/// own logs used; replay reads a stream clang wrote.
///
//===----------------------------------------------------------------------===//
#include "trace_clang_fixture.h"

namespace mlgo::trace::clang_test {
namespace {

TEST_F(TraceClangTest, SamplingRateAndSeedSelectTheSameModulesEveryRun) {
  TraceOptions a = options("inlining", "a.log", "");
  a.selection.samplingRate = 0.1;
  a.selection.seed = 5;
  auto first = selectedModules(a);
  auto second = selectedModules(a);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->size(), 3u); // floor(0.1 * 36)
  std::vector<std::string> names1, names2;
  for (const auto& m : *first)
    names1.push_back(m.name);
  for (const auto& m : *second)
    names2.push_back(m.name);
  EXPECT_EQ(names1, names2);
  TraceOptions other = a;
  other.selection.seed = 6;
  auto reseeded = selectedModules(other);
  ASSERT_TRUE(reseeded.ok());
  std::vector<std::string> names3;
  for (const auto& m : *reseeded)
    names3.push_back(m.name);
  EXPECT_NE(names1, names3);

  // Two runs in parallel write identical files, in the selection's order.
  TraceOptions b = a;
  b.output = dir_.path() / "b.log";
  auto ra = runTrace(a);
  auto rb = runTrace(b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(readFile(a.output), readFile(b.output));
  EXPECT_EQ(readFile(a.output.string() + ".csv"), readFile(b.output.string() + ".csv"));
  std::string trace = readFile(a.output);
  size_t previous = 0;
  for (const std::string& name : names1) {
    size_t at = trace.find("{\"context\":\"" + name + "\"}");
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_GT(at, previous) << name;
    previous = at;
  }
}

TEST_F(TraceClangTest, ReleaseClangIsNotADevelopmentModeBuild) {
  for (std::string name : {"regalloc", "regalloc-priority", "inlining"}) {
    auto problem = env::findProblem(name);
    ASSERT_TRUE(problem.ok());
    auto probe = probeDevelopmentMode(scope_, MLGO_CLANG, **problem);
    ASSERT_TRUE(probe.ok()) << probe.error().message();
    EXPECT_FALSE(probe->supported);
    EXPECT_THAT(probe->detail, HasSubstr("Unknown command line argument")) << name;
  }
  auto problem = env::findProblem("regalloc");
  auto missing = probeDevelopmentMode(scope_, "/nonexistent/clang", **problem);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

/// A stand-in for a development-mode clang: runs clang-22 without the
/// development-mode options and writes a training log like LLVM's regalloc
/// logger (two functions; an outcome only after each function's last
/// observation).
constexpr std::string_view kFakeDevelopmentClang = R"PY(#!/usr/bin/env python3
import struct, subprocess, sys
args, log, i = [], None, 1
while i < len(sys.argv):
    a = sys.argv[i]
    if a == "-mllvm" and i + 1 < len(sys.argv):
        v = sys.argv[i + 1]
        if v.startswith("-regalloc-training-log="):
            log = v.split("=", 1)[1]; i += 2; continue
        if v == "-regalloc-enable-advisor=development":
            i += 2; continue
    args.append(a); i += 1
code = subprocess.run(["@CLANG@"] + args).returncode
if code == 0 and log:
    with open(log, "wb") as f:
        f.write(b'{"features":[{"name":"mask","type":"int64_t","port":0,"shape":[1,2]},'
                b'{"name":"index_to_evict","type":"int64_t","port":0,"shape":[1]}],'
                b'"score":{"name":"reward","type":"float","port":0,"shape":[1]}}\n')
        for fn, actions in (("fake_a", [1, 0]), ("fake_b", [1])):
            f.write(b'{"context":"%s"}\n' % fn.encode())
            for n, act in enumerate(actions):
                f.write(b'{"observation":%d}\n' % n + struct.pack("<qqq", 1, 1, act) + b"\n")
            f.write(b'{"outcome":%d}\n' % (len(actions) - 1) + struct.pack("<f", 3.5) + b"\n")
sys.exit(code)
)PY";

TEST_F(TraceClangTest, DevelopmentModeClangsOwnLogIsTheDefaultTrace) {
  fs::path fake = dir_.path() / "fake-dev-clang";
  std::string script(kFakeDevelopmentClang);
  script.replace(script.find("@CLANG@"), 7, MLGO_CLANG);
  writeFile(fake, script);
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);

  auto problem = env::findProblem("regalloc");
  auto probe = probeDevelopmentMode(scope_, fake, **problem);
  ASSERT_TRUE(probe.ok()) << probe.error().message();
  ASSERT_TRUE(probe->supported) << probe->detail;

  TraceOptions o = options("regalloc", "dev.log", "sha256.o");
  o.environment.clang = fake;
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->policy, "clang-training-log");
  EXPECT_THAT(report->developmentProbe, StartsWith("yes: "));
  EXPECT_EQ(report->observations, 3u);
  std::string trace = readFile(o.output);
  EXPECT_THAT(
      trace,
      StartsWith(
          R"({"features":[{"name":"mask","type":"int64_t","port":0,"shape":[1,2]},{"name":"index_to_evict","type":"int64_t","port":0,"shape":[1]}],"score":{"name":"reward","type":"float","port":0,"shape":[1]},"problem":"regalloc","policy":"clang-training-log")"));
  SummaryVisitor summary;
  ASSERT_TRUE(readLog(o.output, summary).ok());
  LogSummary s = summary.result();
  EXPECT_EQ(s.contexts, 2u);
  EXPECT_EQ(s.outcomes, 3u);            // Every observation gets one.
  EXPECT_EQ(s.allOutcomes.nonZero, 0u); // Default against default.
  EXPECT_EQ(s.actions["0"], 1u);
  EXPECT_EQ(s.actions["1"], 2u);
  EXPECT_THAT(trace, HasSubstr("{\"context\":\"sha256.o:fake_a\"}"));
  EXPECT_THAT(readFile(o.output.string() + ".csv"), HasSubstr("sha256.o,sha256.o:fake_b,0,0,0\n"));
}

TEST_F(TraceClangTest, ReplayReadsAStreamClangWrote) {
  // Record what clang-22 writes on its .out fifo while the host answers
  // with the fallback policy: an interactive capture, with no score and no
  // actions in it.
  auto problem = env::findProblem("regalloc-priority");
  ASSERT_TRUE(problem.ok());
  auto compileDir = support::TempDir::create(scope_, "mlgo-trace-capture-");
  ASSERT_TRUE(compileDir.ok());
  env::CompileCommand command;
  command.channelBase = compileDir->path() / "channel";
  command.objectPath = compileDir->path() / "out.o";
  command.argv = {MLGO_CLANG, "-O2",
                  "-c",       MLGO_SOURCE_DIR "/tests/data/golden_regalloc.c",
                  "-o",       command.objectPath.string()};
  env::ProblemOptions problemOptions;
  for (std::string& arg : (*problem)->interactiveArgs(command.channelBase.string(), problemOptions))
    command.argv.push_back(std::move(arg));
  env::SessionLimits limits;
  limits.scope = &scope_;
  fs::path capture = dir_.path() / "capture.log";
  limits.recordStreamTo = capture;
  auto session = env::startCompilerSession(std::move(*compileDir), command, limits);
  ASSERT_TRUE(session.ok()) << session.error().message();
  env::Observation observation;
  std::vector<std::byte> advice;
  std::shared_ptr<const env::BoundProblem> bound;
  uint64_t answered = 0;
  for (;;) {
    auto event = (*session)->next(observation);
    ASSERT_TRUE(event.ok()) << event.error().message();
    if (*event == env::SessionEvent::kEnd)
      break;
    if (!bound) {
      auto b = (*problem)->bind(*(*session)->header(), problemOptions);
      ASSERT_TRUE(b.ok());
      bound = *b;
      advice.resize(bound->actionSpec().byteSize());
    }
    ASSERT_TRUE(bound->encode(bound->fallback(observation), advice).ok());
    ASSERT_TRUE((*session)->answer(advice).ok());
    ++answered;
  }
  ASSERT_TRUE((*session)->finish().ok());
  ASSERT_GT(answered, 0u);

  SummaryVisitor summary;
  ASSERT_TRUE(readLog(capture, summary).ok());
  LogSummary s = summary.result();
  EXPECT_EQ(s.observations, answered);
  EXPECT_EQ(s.outcomes, 0u);
  EXPECT_TRUE(s.actionFeature.empty()); // The answers are not in the stream.
  EXPECT_FALSE(s.header.score);
  EXPECT_THAT(formatSummaryText(s), HasSubstr("rewards: none (the header has no score)"));
  std::FILE* out = std::tmpfile();
  auto printer = makeLogPrinter(PrintFormat::kText, out);
  ASSERT_TRUE(readLog(capture, *printer).ok());
  ASSERT_TRUE(printer->finish(std::nullopt).ok());
  std::rewind(out);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;)
    text.append(buffer, n);
  std::fclose(out);
  EXPECT_THAT(text, StartsWith("context: "));
  EXPECT_EQ(static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')),
            s.observations * (1 + s.header.features.size()) + (s.contexts - s.emptyContexts));
}

} // namespace
} // namespace mlgo::trace::clang_test
