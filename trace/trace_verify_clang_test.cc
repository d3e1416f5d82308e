//===- trace/trace_verify_clang_test.cc - traces verified, real clang-22 -------===//
///
/// Traces a few small demo modules with clang-22 for every problem, verifies
/// them by replay, and checks that replay pinpoints tampering and truncation
/// and that a failing module leaves the trace intact.
///
//===----------------------------------------------------------------------===//
#include "trace_clang_fixture.h"

namespace mlgo::trace::clang_test {
namespace {

TEST_F(TraceClangTest, TraceThenVerifySucceedsForEveryProblem) {
  for (std::string problem : {"inlining", "regalloc", "regalloc-priority"}) {
    SCOPED_TRACE(problem);
    TraceOptions o = options(problem, problem + ".log");
    auto report = runTrace(o);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(report->selected, 3u);
    EXPECT_EQ(report->done, 3u);
    EXPECT_TRUE(report->failures.empty());
    EXPECT_GT(report->observations, 20u);
    EXPECT_EQ(report->policy, problem == "inlining"   ? "clang-default:inlining_default"
                              : problem == "regalloc" ? "host-emulation-v2:default-eviction"
                                                      : "fallback:priority=weight");
    if (problem != "inlining")
      EXPECT_THAT(report->developmentProbe, StartsWith("no: "));

    // The trace says what it is and holds an outcome per observation.
    SummaryVisitor summary;
    ASSERT_TRUE(readLog(o.output, summary).ok());
    LogSummary s = summary.result();
    EXPECT_EQ(s.metadata.problem, problem);
    EXPECT_EQ(s.metadata.policy, report->policy);
    EXPECT_EQ(s.observations, report->observations);
    EXPECT_EQ(s.outcomes, report->observations);
    EXPECT_EQ(s.contexts, report->contexts);
    EXPECT_EQ(s.emptyContexts, 0u);
    EXPECT_EQ(s.contextRewards.count, report->contexts);
    ASSERT_FALSE(s.header.features.empty());
    EXPECT_EQ(s.actionFeature, s.header.features.back().name());
    if (problem == "inlining") {
      EXPECT_EQ(s.contexts, 3u);
      EXPECT_TRUE(s.header.featureIndex("inlining_default").has_value());
      EXPECT_EQ(s.allOutcomes.nonZero, 0u); // clang's default is the baseline.
    } else {
      EXPECT_GT(s.contexts, 3u); // Functions.
    }
    // CSV: header, one row per context, plus a module row per module for the
    // per-function problems.
    std::string csv = readFile(o.output.string() + ".csv");
    EXPECT_THAT(csv, StartsWith("module,context,default_score,policy_score,reward\n"));
    EXPECT_EQ(countLines(csv), 1 + s.contexts + (problem == "inlining" ? 0 : 3));

    auto verified = verifyTrace(verifyOptions(o));
    ASSERT_TRUE(verified.ok()) << verified.error().message();
    EXPECT_FALSE(verified->divergence) << verified->divergence->message();
    EXPECT_EQ(verified->modules, 3u);
    EXPECT_EQ(verified->observations, report->observations);
    EXPECT_EQ(verified->outcomes, report->observations);
  }
}

// The regalloc default trace is the host emulation of clang's default
// eviction advisor: over the whole -O2 demo corpus its CSV must show the
// plain compile's scores on most traced functions and the total within 0.5%
// (the figures of env/regalloc_default_clang_test.cc, which plays episodes),
// and the report's module-mean reward must be the mean of the CSV's module rows.
TEST_F(TraceClangTest, RegallocDefaultTraceReproducesThePlainCompile) {
  TraceOptions o = options("regalloc", "regalloc-all.log", "");
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->failures.empty());
  EXPECT_EQ(report->done, report->selected);
  ASSERT_GT(report->selected, 30u);

  std::istringstream csv(readFile(report->csv));
  std::string line;
  std::getline(csv, line); // Header.
  size_t functions = 0, identical = 0, modules = 0;
  double defaultTotal = 0, policyTotal = 0, rewardSum = 0;
  while (std::getline(csv, line)) {
    // Module and function names in the demo corpus need no CSV quoting.
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');)
      f.push_back(field);
    ASSERT_EQ(f.size(), 5u) << line;
    double defaultScore = std::stod(f[2]), policyScore = std::stod(f[3]);
    if (f[1] == f[0]) { // The module's row.
      ++modules;
      defaultTotal += defaultScore;
      policyTotal += policyScore;
      rewardSum += std::stod(f[4]);
    } else {
      ++functions;
      identical += defaultScore == policyScore;
    }
  }
  EXPECT_EQ(modules, report->done);
  ASSERT_GT(functions, 100u);
  double ratio = policyTotal / defaultTotal;
  RecordProperty("identical_traced_functions", std::to_string(double(identical) / functions));
  RecordProperty("total_ratio", std::to_string(ratio));
  EXPECT_GE(double(identical) / double(functions), 0.89) << identical << " of " << functions;
  EXPECT_LE(std::abs(ratio - 1), 0.005) << ratio;
  EXPECT_NEAR(report->defaultTotal, defaultTotal, 1e-6 * defaultTotal);
  EXPECT_NEAR(report->policyTotal, policyTotal, 1e-6 * policyTotal);
  EXPECT_NEAR(report->moduleRewardMean(), rewardSum / double(modules), 1e-9);
}

// With an IR2Vec vocabulary the trace records clang's embedding features and
// names the vocabulary, so `--verify` needs no flag to reproduce them.
TEST_F(TraceClangTest, Ir2VecTraceNamesItsVocabularyAndVerifiesWithoutTheFlag) {
  const fs::path vocabulary = fs::path(MLGO_SOURCE_DIR) / "ir2vec" / "vocab" / "demo-75d.json";
  TraceOptions o = options("inlining", "ir2vec.log");
  o.environment.ir2vecVocabulary = vocabulary;
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->done, 3u);

  SummaryVisitor summary;
  ASSERT_TRUE(readLog(o.output, summary).ok());
  LogSummary s = summary.result();
  EXPECT_EQ(fs::path(s.metadata.ir2vecVocabulary), vocabulary.lexically_normal());
  for (const char* name : {"callee_embedding", "caller_embedding"}) {
    auto index = s.header.featureIndex(name);
    ASSERT_TRUE(index.has_value()) << name;
    EXPECT_EQ(s.header.features[*index].elementCount(), 75u);
  }

  VerifyOptions v = verifyOptions(o);
  v.environment.ir2vecVocabulary.clear();
  auto verified = verifyTrace(v);
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  EXPECT_FALSE(verified->divergence) << verified->divergence->message();
  EXPECT_EQ(verified->observations, report->observations);

  // A trace whose features lack the embeddings cannot be verified against a
  // clang that sends them, and the error says which features differ.
  TraceOptions plain = options("inlining", "plain.log");
  ASSERT_TRUE(runTrace(plain).ok());
  VerifyOptions mismatched = verifyOptions(plain);
  mismatched.environment.ir2vecVocabulary = vocabulary;
  auto refused = verifyTrace(mismatched);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message(), HasSubstr("callee_embedding"));
}

// The trace records its corpus and recompile rules; --verify without them
// compiles the same way, and other rules really change what clang does.
TEST_F(TraceClangTest, VerifyCompilesWithTheTracesCorpusAndRules) {
  auto demo = corpus::defaultDemoCorpusDir("Oz");
  ASSERT_TRUE(demo.ok());
  const fs::path copy = dir_.path() / "corpus-copy";
  fs::copy(*demo, copy, fs::copy_options::recursive);
  TraceOptions o = options("inlining", "rules.log", "geometry_templates.o|sha256.o");
  o.environment.corpus = copy;
  o.environment.flagRules.addFlags = {"-mllvm", "-inline-threshold=500"};
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();

  SummaryVisitor summary;
  ASSERT_TRUE(readLog(o.output, summary).ok());
  EXPECT_EQ(fs::path(summary.result().metadata.corpus), copy);
  EXPECT_EQ(summary.result().metadata.flagRules, o.environment.flagRules);

  VerifyOptions bare;
  bare.trace = o.output;
  bare.environment.clang = MLGO_CLANG;
  bare.environment.cacheDir = shared_->path() / "cache";
  auto verified = verifyTrace(bare);
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  EXPECT_FALSE(verified->divergence) << verified->divergence->message();
  EXPECT_EQ(verified->modules, 2u);

  VerifyOptions other = bare;
  other.environment.flagRules.addFlags = {"-mllvm", "-inline-threshold=225"};
  auto differs = verifyTrace(other);
  ASSERT_TRUE(differs.ok()) << differs.error().message();
  ASSERT_TRUE(differs->divergence);
  EXPECT_THAT(differs->divergence->message(), HasSubstr("geometry_templates.o"));
}

/// Byte offset of the feature data of observation `id` in `context`.
size_t observationData(const std::string& trace, const std::string& context, int id) {
  size_t at = trace.find("{\"context\":\"" + context + "\"}\n");
  EXPECT_NE(at, std::string::npos);
  std::string line = "{\"observation\":" + std::to_string(id) + "}\n";
  at = trace.find(line, at);
  EXPECT_NE(at, std::string::npos);
  return at + line.size();
}

TEST_F(TraceClangTest, VerifyPinpointsAChangedFeatureAndAChangedReward) {
  TraceOptions o = options("regalloc-priority", "p.log", "sha256.o");
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  const std::string original = readFile(o.output);
  // The first context, and its header (li_size int64, stage int64, weight
  // float, then the action).
  size_t start = original.find("{\"context\":\"") + 12;
  std::string context = original.substr(start, original.find('"', start) - start);
  ASSERT_THAT(context, StartsWith("sha256.o:"));

  // Observation 1's `stage` (second feature, bytes 8..15).
  std::string tampered = original;
  size_t stage = observationData(tampered, context, 1) + 8;
  int64_t was = 0, now = 0;
  std::memcpy(&was, tampered.data() + stage, 8);
  now = was + 5;
  std::memcpy(tampered.data() + stage, &now, 8);
  writeFile(o.output, tampered);
  auto verified = verifyTrace(verifyOptions(o));
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  ASSERT_TRUE(verified->divergence);
  const Divergence& d = *verified->divergence;
  EXPECT_EQ(d.module, "sha256.o");
  EXPECT_EQ(d.context, context);
  EXPECT_EQ(d.observation, 1);
  EXPECT_EQ(d.feature, "stage");
  EXPECT_EQ(d.element, 0u);
  EXPECT_EQ(d.expected, std::to_string(now));
  EXPECT_EQ(d.actual, std::to_string(was));
  EXPECT_THAT(d.message(), HasSubstr(fmt::format("module sha256.o, context {}, observation 1, "
                                                 "feature 'stage' element 0: the observation "
                                                 "differs (trace: {}; replay: {})",
                                                 context, now, was)));

  // The reward after the context's last observation.
  tampered = original;
  size_t next = tampered.find("{\"context\":", start);
  size_t outcome = tampered.rfind("{\"outcome\":", next);
  ASSERT_NE(outcome, std::string::npos);
  size_t score = tampered.find('\n', outcome) + 1;
  float recorded = 0, changed = 0.5F;
  std::memcpy(&recorded, tampered.data() + score, 4);
  std::memcpy(tampered.data() + score, &changed, 4);
  writeFile(o.output, tampered);
  verified = verifyTrace(verifyOptions(o));
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  ASSERT_TRUE(verified->divergence);
  EXPECT_EQ(verified->divergence->context, context);
  EXPECT_EQ(verified->divergence->feature, "reward");
  EXPECT_EQ(verified->divergence->what, "the context's reward differs");
  EXPECT_EQ(verified->divergence->expected, "0.5");
  EXPECT_EQ(verified->divergence->actual, fmt::format("{}", recorded));
}

TEST_F(TraceClangTest, VerifyReportsTruncationWithItsOffset) {
  TraceOptions o = options("inlining", "i.log", "codecs.o");
  ASSERT_TRUE(runTrace(o).ok());
  std::string trace = readFile(o.output);
  writeFile(o.output, trace.substr(0, trace.size() - 3));
  auto verified = verifyTrace(verifyOptions(o));
  ASSERT_FALSE(verified.ok());
  EXPECT_THAT(verified.error().message(), HasSubstr(fmt::format("offset {}", trace.size() - 3)));
}

TEST_F(TraceClangTest, FailingModuleIsReportedAndLeavesTheTraceIntact) {
  // A corpus of three demo modules, one with broken bitcode.
  auto demo = corpus::defaultDemoCorpusDir("Oz");
  ASSERT_TRUE(demo.ok());
  fs::path corpusDir = dir_.path() / "corpus";
  fs::create_directories(corpusDir);
  for (std::string m : {"sha256.o", "codecs.o", "bignum.o"}) {
    fs::copy_file(*demo / (m + ".bc"), corpusDir / (m + ".bc"));
    fs::copy_file(*demo / (m + ".cmd"), corpusDir / (m + ".cmd"));
  }
  writeFile(corpusDir / "codecs.o.bc", "BC\xc0\xde this is not bitcode");
  writeFile(corpusDir / "corpus_description.json",
            R"({"modules":["sha256.o","codecs.o","bignum.o"],"has_thinlto":false})");

  TraceOptions o = options("inlining", "f.log", "");
  o.environment.corpus = corpusDir;
  auto report = runTrace(o);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->selected, 3u);
  EXPECT_EQ(report->done, 2u);
  ASSERT_EQ(report->failures.size(), 1u);
  EXPECT_EQ(report->failures[0].module, "codecs.o");
  EXPECT_THAT(report->failures[0].message, HasSubstr("codecs.o"));

  SummaryVisitor summary;
  ASSERT_TRUE(readLog(o.output, summary).ok()); // Whole records to the end.
  EXPECT_EQ(summary.result().contexts, 2u);
  std::string csv = readFile(o.output.string() + ".csv");
  EXPECT_THAT(csv, testing::Not(HasSubstr("codecs.o")));
  auto verified = verifyTrace(verifyOptions(o));
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  EXPECT_FALSE(verified->divergence);
  EXPECT_EQ(verified->modules, 2u);
}

} // namespace
} // namespace mlgo::trace::clang_test
