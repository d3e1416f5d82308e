//===- trace/log_reading_test.cc - printing, summarising, truncation --------===//
#include "mlgo/protocol/stream_writer.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"
#include "mlgo/trace/log_printer.h"
#include "mlgo/trace/log_summary.h"
#include "mlgo/trace/trace_header.h"
#include "module_trace.h"
#include "trace_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace mlgo::trace {
namespace {

using protocol::ElementType;
using protocol::TensorSpec;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TensorSpec spec(std::string name, ElementType type, std::vector<int64_t> shape) {
  return *TensorSpec::create(std::move(name), type, std::move(shape));
}

template <typename T> void put(std::vector<std::byte>& out, T value) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

/// A two-module inlining-like trace: features x int64 [1], y float [2],
/// action inlining_decision int64 [1]; rewards 0.25 (a.o) and -0.5 (b.o).
std::string sampleTrace() {
  protocol::LogHeader header = makeTraceHeader(
      std::vector{spec("x", ElementType::kInt64, {1}), spec("y", ElementType::kFloat, {2})},
      spec("inlining_decision", ElementType::kInt64, {1}));
  TraceMetadata metadata;
  metadata.problem = "inlining";
  metadata.policy = "clang-default:inlining_default";
  metadata.action = "inlining_decision";
  std::string out = traceHeaderLine(header, metadata) + "\n";
  for (auto [module, reward, count] : {std::tuple{"a.o", 0.25, 2}, std::tuple{"b.o", -0.5, 3}}) {
    ModuleTraceBuilder builder(header, module);
    for (int i = 0; i < count; ++i) {
      std::vector<std::byte> features, action;
      put<int64_t>(features, i + 10);
      put<float>(features, 1.5F);
      put<float>(features, static_cast<float>(i));
      put<int64_t>(action, i % 2);
      EXPECT_TRUE(builder.add("", features, action).ok());
    }
    std::vector<ContextResult> rows = {{module, 4, 3, reward, true}};
    auto records = builder.finish(rows);
    EXPECT_TRUE(records.ok());
    out += *records;
  }
  return out;
}

class LogReading : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-trace-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  std::filesystem::path write(const std::string& name, const std::string& bytes) {
    std::filesystem::path path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  /// Prints `path` in `format`; returns the output and the read status.
  std::pair<std::string, Status> print(const std::filesystem::path& path, PrintFormat format) {
    std::filesystem::path outPath = dir_.path() / "out.txt";
    std::FILE* out = std::fopen(outPath.c_str(), "wb");
    auto printer = makeLogPrinter(format, out);
    Status read = readLog(path, *printer);
    std::optional<Error> error;
    if (!read.ok())
      error = read.error();
    EXPECT_TRUE(printer->finish(error).ok());
    std::fclose(out);
    std::ifstream in(outPath, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return {text.str(), read};
  }
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
};

TEST_F(LogReading, TextLooksLikeLlvmsLogReader) {
  auto [text, status] = print(write("t.log", sampleTrace()), PrintFormat::kText);
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_THAT(text, StartsWith("context: a.o\nobservation: 0\nx: 10\ny: 1.5,0\n"
                               "inlining_decision: 0\nreward: 0\nobservation: 1\nx: 11\n"
                               "y: 1.5,1\ninlining_decision: 1\nreward: 0.25\ncontext: b.o\n"));
  EXPECT_THAT(text, HasSubstr("observation: 2\nx: 12\ny: 1.5,2\ninlining_decision: 0\n"
                              "reward: -0.5\n"));
}

TEST_F(LogReading, JsonAndCsvCarryEveryRecord) {
  auto [json, status] = print(write("t.log", sampleTrace()), PrintFormat::kJson);
  ASSERT_TRUE(status.ok());
  EXPECT_THAT(json, StartsWith("{\"header\":{\"features\":["));
  EXPECT_THAT(json, HasSubstr("{\"context\":\"a.o\",\"observation\":1,\"features\":{\"x\":[11],"
                              "\"y\":[1.5,1],\"inlining_decision\":[1]},\"outcome\":[0.25]}"));
  EXPECT_THAT(json, testing::EndsWith("\n]}\n"));
  auto [csv, csvStatus] = print(write("t.log", sampleTrace()), PrintFormat::kCsv);
  ASSERT_TRUE(csvStatus.ok());
  EXPECT_THAT(csv, StartsWith("context,observation,x,y[0],y[1],inlining_decision,reward\n"
                              "a.o,0,10,1.5,0,0,0\na.o,1,11,1.5,1,1,0.25\nb.o,0,10,1.5,0,0,0\n"
                              "b.o,1,11,1.5,1,1,0\nb.o,2,12,1.5,2,0,-0.5\n"));
}

TEST_F(LogReading, TruncatedLogPrintsWhatWasReadableThenNamesTheOffset) {
  std::string full = sampleTrace();
  size_t secondModule = full.find("{\"context\":\"b.o\"}");
  ASSERT_NE(secondModule, std::string::npos);
  // Cut inside b.o's first observation's tensors.
  size_t cut = full.find("{\"observation\":0}", secondModule) + 20;
  auto [text, status] = print(write("cut.log", full.substr(0, cut)), PrintFormat::kText);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message(), HasSubstr("cut.log: offset "));
  EXPECT_THAT(status.error().message(), HasSubstr(std::to_string(cut)));
  EXPECT_THAT(text, HasSubstr("reward: 0.25\n")); // a.o was printed in full.
  EXPECT_THAT(text, testing::Not(HasSubstr("context: b.o")));

  auto [json, jsonStatus] = print(write("cut.log", full.substr(0, cut)), PrintFormat::kJson);
  ASSERT_FALSE(jsonStatus.ok());
  EXPECT_THAT(json, HasSubstr("\"outcome\":[0.25]}\n],\n\"error\":\""));
  EXPECT_THAT(json, HasSubstr(fmt::format("cut.log: offset {}: stream ends inside observation 0 "
                                          "(context 'b.o')",
                                          cut)));
}

TEST_F(LogReading, CorruptedRecordNamesItsOffset) {
  std::string bad = sampleTrace();
  size_t at = bad.find("{\"outcome\":1}");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 13, "{\"outcome\":7}");
  auto [text, status] = print(write("bad.log", bad), PrintFormat::kText);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message(), HasSubstr(fmt::format("offset {}", at)));
  EXPECT_THAT(text, HasSubstr("inlining_decision: 1\n")); // The observation before it.
}

TEST_F(LogReading, MissingFileIsNotFound) {
  auto printer = makeLogPrinter(PrintFormat::kText, stdout);
  Status st = readLog(dir_.path() / "nope.log", *printer);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), ErrorCode::kNotFound);
}

TEST_F(LogReading, SummaryCountsActionsAndRewards) {
  SummaryVisitor visitor;
  ASSERT_TRUE(readLog(write("t.log", sampleTrace()), visitor).ok());
  LogSummary s = visitor.result();
  EXPECT_EQ(s.metadata.problem, "inlining");
  EXPECT_EQ(s.contexts, 2u);
  EXPECT_EQ(s.observations, 5u);
  EXPECT_EQ(s.outcomes, 5u);
  EXPECT_EQ(s.actionFeature, "inlining_decision");
  EXPECT_EQ(s.actions["0"], 3u);
  EXPECT_EQ(s.actions["1"], 2u);
  EXPECT_EQ(s.contextRewards.count, 2u);
  EXPECT_DOUBLE_EQ(s.contextRewards.min, -0.5);
  EXPECT_DOUBLE_EQ(s.contextRewards.max, 0.25);
  EXPECT_EQ(s.allOutcomes.nonZero, 2u);
  EXPECT_THAT(formatSummaryText(s), HasSubstr("actions (inlining_decision): 2 distinct\n"));
  EXPECT_THAT(formatSummaryJson(s), HasSubstr("\"actions\":{\"0\":3,\"1\":2}"));
}

TEST_F(LogReading, InteractiveCaptureHasNoActionsAndEmptyContextsAreFine) {
  // What clang writes on .out: an advice spec, no score, no actions, and a
  // context without observations.
  protocol::LogHeader header;
  header.features = {spec("li_size", ElementType::kInt64, {1})};
  header.advice = spec("priority", ElementType::kFloat, {1});
  protocol::StreamWriter writer(header);
  std::string log;
  writer.writeHeader(log);
  writer.writeContext(log, "empty");
  writer.writeContext(log, "f");
  std::vector<std::byte> bytes;
  put<int64_t>(bytes, 57);
  ASSERT_TRUE(writer.writeObservation(log, bytes).ok());
  SummaryVisitor visitor;
  ASSERT_TRUE(readLog(write("capture.log", log), visitor).ok());
  LogSummary s = visitor.result();
  EXPECT_EQ(s.contexts, 2u);
  EXPECT_EQ(s.emptyContexts, 1u);
  EXPECT_EQ(s.observations, 1u);
  EXPECT_TRUE(s.actionFeature.empty());
  EXPECT_THAT(formatSummaryText(s), HasSubstr("actions: none recorded"));
  auto [text, status] = print(write("capture.log", log), PrintFormat::kText);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(text, "context: f\nobservation: 0\nli_size: 57\n");
}

TEST_F(LogReading, TraceFilesAppearOnlyOnCommit) {
  std::filesystem::path trace = dir_.path() / "t.log";
  {
    auto files = TraceFiles::create(scope_, trace, {}, "{\"features\":[]}");
    ASSERT_TRUE(files.ok());
    ASSERT_TRUE(files->append("", "m,m,1,1,0\n").ok());
    EXPECT_FALSE(std::filesystem::exists(trace));
  } // Dropped without commit: nothing is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_.path()),
                          std::filesystem::directory_iterator()),
            0);
  auto files = TraceFiles::create(scope_, trace, {}, "{\"features\":[]}");
  ASSERT_TRUE(files.ok());
  ASSERT_TRUE(files->append("", "m,m,1,1,0\n").ok());
  auto bytes = files->commit();
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 16u);
  EXPECT_TRUE(std::filesystem::exists(trace));
  std::ifstream csv(dir_.path() / "t.log.csv");
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_EQ(text.str(), "module,context,default_score,policy_score,reward\nm,m,1,1,0\n");
}

} // namespace
} // namespace mlgo::trace
