//===- trace/trace_format_test.cc - headers, modules and rows of a trace ----===//
#include "action_codec.h"
#include "context_rewards.h"
#include "mlgo/protocol/stream_reader.h"
#include "mlgo/trace/trace_header.h"
#include "module_trace.h"
#include "observation_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace mlgo::trace {
namespace {

using protocol::ElementType;
using protocol::TensorSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorSpec spec(std::string name, ElementType type, std::vector<int64_t> shape) {
  return *TensorSpec::create(std::move(name), type, std::move(shape));
}

/// features: a int64 [1], w float [2]; action: index_to_evict int64 [1].
protocol::LogHeader smallHeader() {
  std::vector<TensorSpec> features = {spec("a", ElementType::kInt64, {1}),
                                      spec("w", ElementType::kFloat, {1, 2})};
  return makeTraceHeader(features, spec("index_to_evict", ElementType::kInt64, {1}));
}

std::vector<std::byte> features(int64_t a, float w0, float w1) {
  std::vector<std::byte> out(16);
  std::memcpy(out.data(), &a, 8);
  std::memcpy(out.data() + 8, &w0, 4);
  std::memcpy(out.data() + 12, &w1, 4);
  return out;
}

std::vector<std::byte> action(int64_t value) {
  std::vector<std::byte> out(8);
  std::memcpy(out.data(), &value, 8);
  return out;
}

struct ReadBack {
  std::vector<std::string> lines; ///< "context X", "obs N a", "outcome N r"
  Status status;
};

ReadBack readAll(std::string_view stream) {
  ReadBack back;
  protocol::StreamReader reader;
  reader.feed(stream);
  reader.finish();
  protocol::LogEvent ev;
  for (;;) {
    auto st = reader.next(ev);
    if (!st.ok()) {
      back.status = st.error();
      return back;
    }
    if (*st != protocol::ReadStatus::kEvent)
      return back;
    if (ev.kind == protocol::EventKind::kContext)
      back.lines.push_back("context " + std::string(ev.context));
    if (ev.kind == protocol::EventKind::kObservation)
      back.lines.push_back(fmt::format("obs {} {} act {}", ev.id,
                                       protocol::loadElement<int64_t>(ev.tensors[0].data(), 0),
                                       protocol::loadElement<int64_t>(ev.tensors[2].data(), 0)));
    if (ev.kind == protocol::EventKind::kOutcome)
      back.lines.push_back(
          fmt::format("outcome {} {}", ev.id, protocol::loadElement<float>(ev.data.data(), 0)));
  }
}

TEST(TraceHeader, AddsActionLastAndFloatRewardAndMetadataKeys) {
  protocol::LogHeader header = smallHeader();
  ASSERT_EQ(header.features.size(), 3u);
  EXPECT_EQ(header.features.back().name(), "index_to_evict");
  ASSERT_TRUE(header.score);
  EXPECT_EQ(header.score->toJson(), R"({"name":"reward","type":"float","port":0,"shape":[1]})");
  EXPECT_FALSE(header.advice);

  TraceMetadata metadata;
  metadata.problem = "regalloc";
  metadata.policy = "fallback:evict-none-else-first-valid";
  metadata.action = "index_to_evict";
  std::string line = traceHeaderLine(header, metadata);
  EXPECT_THAT(
      line,
      HasSubstr(
          R"(,"problem":"regalloc","policy":"fallback:evict-none-else-first-valid","action":"index_to_evict"})"));
  // Our own reader (like LLVM's) ignores the extra keys.
  auto parsed = protocol::LogHeader::fromJson(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(*parsed, header);
  auto back = readTraceMetadata(line);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, metadata);
  EXPECT_THAT(line, ::testing::Not(HasSubstr("ir2vec_vocab")));
  TraceMetadata withVocab = metadata;
  withVocab.ir2vecVocabulary = "/v/\"odd\" name.json";
  auto vocabBack = readTraceMetadata(traceHeaderLine(header, withVocab));
  ASSERT_TRUE(vocabBack.ok()) << vocabBack.error().message();
  EXPECT_EQ(*vocabBack, withVocab);

  // The corpus and the recompile rules, a replacement's value with its '='.
  TraceMetadata full = withVocab;
  full.corpus = "/c/corpus";
  full.flagRules.deleteFlags = {"-fprofile-instrument-use-path"};
  full.flagRules.replaceFlags = {{"-fdebug-compilation-dir", "/x=y"}};
  full.flagRules.addFlags = {"-mllvm", "-inline-threshold=500"};
  std::string fullLine = traceHeaderLine(header, full);
  EXPECT_THAT(fullLine, HasSubstr(R"("replace_flags":["-fdebug-compilation-dir=/x=y"])"));
  auto fullBack = readTraceMetadata(fullLine);
  ASSERT_TRUE(fullBack.ok()) << fullBack.error().message();
  EXPECT_EQ(*fullBack, full);
  for (const char* bad : {R"({"features":[],"add_flags":"-O2"})",
                          R"({"features":[],"delete_flags":[1]})",
                          R"({"features":[],"replace_flags":["no-equals-sign"]})"}) {
    auto refused = readTraceMetadata(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code(), ErrorCode::kParse) << bad;
  }
  // Logs without the keys have empty metadata; a non-string is an error.
  auto plain = readTraceMetadata(header.toJson());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, TraceMetadata{});
  EXPECT_FALSE(readTraceMetadata(R"({"features":[],"policy":3})").ok());
}

TEST(TraceHeader, ContextNamesSplitOnTheLongestKnownModule) {
  EXPECT_EQ(contextName("a.o", ""), "a.o");
  EXPECT_EQ(contextName("a.o", "_Z1fv"), "a.o:_Z1fv");
  std::vector<std::string> modules = {"a.o", "lib:x.o", "lib:x.o:y.o"};
  std::sort(modules.begin(), modules.end());
  auto whole = splitContextName("a.o", modules);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->first, "a.o");
  EXPECT_EQ(whole->second, "");
  auto fn = splitContextName("lib:x.o:y.o:main", modules);
  ASSERT_TRUE(fn);
  EXPECT_EQ(fn->first, "lib:x.o:y.o");
  EXPECT_EQ(fn->second, "main");
  auto shorter = splitContextName("lib:x.o:f:g", modules);
  ASSERT_TRUE(shorter);
  EXPECT_EQ(shorter->first, "lib:x.o");
  EXPECT_EQ(shorter->second, "f:g");
  EXPECT_FALSE(splitContextName("b.o:main", modules));
}

TEST(ModuleTrace, RewardFollowsTheLastObservationOfEachContext) {
  protocol::LogHeader header = smallHeader();
  ModuleTraceBuilder builder(header, "m.o");
  ASSERT_TRUE(builder.add("f", features(1, 0.5F, 1), action(32)).ok());
  ASSERT_TRUE(builder.add("f", features(2, 0.5F, 1), action(3)).ok());
  ASSERT_TRUE(builder.add("g", features(3, 0, 0), action(0)).ok());
  ASSERT_TRUE(builder.add("f", features(4, 0, 0), action(1)).ok()); // Back to f.
  EXPECT_THAT(builder.functions(), ElementsAre("f", "g"));
  EXPECT_EQ(builder.observations(), 4u);

  std::vector<ContextResult> rows = {{"m.o:f", 10, 8, 0.2, true},
                                     {"m.o:g", 4, 5, -0.25, true},
                                     {"m.o", 14, 13, 1 - 13.0 / 14, false}};
  std::string stream = traceHeaderLine(header, {}) + "\n";
  auto records = builder.finish(rows);
  ASSERT_TRUE(records.ok()) << records.error().message();
  stream += *records;
  ReadBack back = readAll(stream);
  ASSERT_TRUE(back.status.ok()) << back.status.error().message();
  EXPECT_THAT(back.lines,
              ElementsAre("context m.o:f", "obs 0 1 act 32", "outcome 0 0", "obs 1 2 act 3",
                          "outcome 1 0", "context m.o:g", "obs 0 3 act 0", "outcome 0 -0.25",
                          "context m.o:f", "obs 2 4 act 1", "outcome 2 0.2"));
}

TEST(ModuleTrace, RejectsWrongSizesAndMissingRewards) {
  protocol::LogHeader header = smallHeader();
  ModuleTraceBuilder builder(header, "m.o");
  EXPECT_FALSE(builder.add("", std::vector<std::byte>(15), action(1)).ok());
  EXPECT_FALSE(builder.add("", features(1, 0, 0), std::vector<std::byte>(4)).ok());
  ASSERT_TRUE(builder.add("", features(1, 0, 0), action(1)).ok());
  auto records = builder.finish({});
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(records.error().message(), HasSubstr("no reward for context m.o"));
}

TEST(ContextRewards, ModuleLevelHasOneRowPerFunctionLevelHasFunctionsAndTotal) {
  env::EpisodeSummary summary;
  summary.policyScore = 30;
  summary.defaultScore = 20;
  summary.contexts = {{"f", 12, 10.0}, {"g", 18, std::nullopt}};
  auto inlining = env::findProblem("inlining");
  auto regalloc = env::findProblem("regalloc");
  ASSERT_TRUE(inlining.ok() && regalloc.ok());
  auto rows = contextResults(**inlining, "m.o", summary, std::vector<std::string>{""});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].context, "m.o");
  EXPECT_DOUBLE_EQ(rows[0].reward, 1 - 30.0 / 20);
  EXPECT_TRUE(rows[0].inTrace);

  std::vector<std::string> functions = {"g", "f", "h"};
  rows = contextResults(**regalloc, "m.o", summary, functions);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].context, "m.o:g");
  EXPECT_EQ(rows[0].defaultScore, 0); // The default compile did not report g.
  EXPECT_EQ(rows[0].reward, -1);      // relativeReward(18, 0).
  EXPECT_EQ(rows[1].context, "m.o:f");
  EXPECT_DOUBLE_EQ(rows[1].reward, 1 - 12.0 / 10);
  EXPECT_EQ(rows[2].context, "m.o:h"); // Reported by neither: 0 and 0.
  EXPECT_EQ(rows[2].reward, 0);
  EXPECT_EQ(rows[3].context, "m.o");
  EXPECT_FALSE(rows[3].inTrace);

  std::string csv;
  appendCsvRows(csv, "a,\"b\".o", std::span(rows).first(1));
  EXPECT_EQ(csv, "\"a,\"\"b\"\".o\",m.o:g,0,18,-1\n");
  csv.clear();
  std::vector<ContextResult> quoted = {{"x\"y:f", 1, 2, -1, true}};
  appendCsvRows(csv, "x\"y", quoted);
  EXPECT_EQ(csv, "\"x\"\"y\",\"x\"\"y:f\",1,2,-1\n");
}

TEST(ActionCodec, RoundTripsIntegersAndFloats) {
  TensorSpec integer = spec("index_to_evict", ElementType::kInt64, {1});
  TensorSpec real = spec("priority", ElementType::kFloat, {1});
  std::vector<std::byte> bytes(8);
  ASSERT_TRUE(encodeAction(integer, env::ActionValue(int64_t{32}), bytes).ok());
  auto back = decodeAction(integer, bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::get<int64_t>(*back), 32);
  std::vector<std::byte> four(4);
  ASSERT_TRUE(encodeAction(real, env::ActionValue(2.5), four).ok());
  auto real2 = decodeAction(real, four);
  ASSERT_TRUE(real2.ok());
  EXPECT_EQ(std::get<double>(*real2), 2.5);
  EXPECT_FALSE(decodeAction(real, bytes).ok()); // Wrong size.
  EXPECT_FALSE(encodeAction(integer, env::ActionValue(0.5), bytes).ok());
}

TEST(ObservationDiff, NamesFeatureElementAndValues) {
  std::vector<TensorSpec> specs = {spec("a", ElementType::kInt64, {1}),
                                   spec("w", ElementType::kFloat, {1, 2})};
  auto same = features(1, 0.5F, 2);
  EXPECT_FALSE(firstDifference(specs, same, same));
  auto diff = firstDifference(specs, features(1, 0.5F, 2), features(1, 0.5F, 3));
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->feature, "w");
  EXPECT_EQ(diff->element, 1u);
  EXPECT_EQ(diff->expected, "2");
  EXPECT_EQ(diff->actual, "3");
  auto first = firstDifference(specs, features(7, 0, 0), features(1, 0, 0));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->feature, "a");
  EXPECT_EQ(first->element, 0u);
}

} // namespace
} // namespace mlgo::trace
