//===- tests/protocol_golden_test.cc - real clang-22 streams --------------===//
///
/// Captures the streams clang-22 writes in interactive mode for the three
/// problems (from small C sources under tests/data), then checks that the
/// reader parses every observation, that chunking does not change the events,
/// and that the writer reproduces the captured bytes exactly.
///
//===----------------------------------------------------------------------===//
#include "support/fifo_host.h"
#include "support/log_events.h"

#include "mlgo/protocol/advice.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace mlgo::protocol {
namespace {

struct Problem {
  const char* name;
  const char* source;
  const char* opt;
  std::vector<std::string> flags; // each passed after -mllvm; "{base}" is replaced
  testing::Policy policy;
};

std::vector<std::byte> answerInlining(const LogHeader& header, const LogEvent& event) {
  auto index = header.featureIndex("inlining_default");
  int64_t decision = index ? loadElement<int64_t>(event.tensors[*index].data(), 0) : 0;
  return *encodeScalarAdvice(*header.advice, decision);
}

std::vector<std::byte> answerEviction(const LogHeader& header, const LogEvent& event) {
  // Index 32 means "evict nothing"; take it when allowed, else the first
  // candidate the mask allows.
  const auto& mask = event.tensors[*header.featureIndex("mask")];
  int64_t choice = -1;
  if (loadElement<int64_t>(mask.data(), 32) == 1)
    choice = 32;
  for (int64_t i = 0; choice < 0 && i < 33; ++i)
    if (loadElement<int64_t>(mask.data(), static_cast<size_t>(i)) == 1)
      choice = i;
  return *encodeScalarAdvice(*header.advice, choice);
}

std::vector<std::byte> answerPriority(const LogHeader& header, const LogEvent& event) {
  // Longer live ranges first: a deterministic, valid priority.
  auto size = loadElement<int64_t>(event.tensors[*header.featureIndex("li_size")].data(), 0);
  return *encodeScalarAdvice(*header.advice, static_cast<double>(size % 1000));
}

std::vector<Problem> problems() {
  return {
      {"inlining", "golden_inline.c", "-Oz",
       {"-enable-ml-inliner=release", "-inliner-interactive-channel-base={base}",
        "-inliner-interactive-include-default"},
       answerInlining},
      {"regalloc", "golden_regalloc.c", "-O2",
       {"-regalloc-enable-advisor=release", "-regalloc-evict-interactive-channel-base={base}"},
       answerEviction},
      {"regalloc-priority", "golden_regalloc.c", "-O2",
       {"-regalloc-enable-priority-advisor=release",
        "-regalloc-priority-interactive-channel-base={base}"},
       answerPriority},
  };
}

class GoldenStream : public ::testing::TestWithParam<size_t> {
protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mlgo-golden-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_P(GoldenStream, ReaderParsesAndWriterReproducesClangBytes) {
  const Problem problem = problems()[GetParam()];
  const std::string base = (dir_ / "channel").string();
  std::vector<std::string> argv = {MLGO_CLANG, problem.opt, "-c",
                                   std::string(MLGO_SOURCE_DIR) + "/tests/data/" + problem.source,
                                   "-o", (dir_ / "out.o").string(), "-fno-crash-diagnostics"};
  for (std::string flag : problem.flags) {
    if (auto at = flag.find("{base}"); at != std::string::npos)
      flag.replace(at, 6, base);
    argv.push_back("-mllvm");
    argv.push_back(flag);
  }
  auto capture = testing::runInteractive(argv, base, problem.policy);
  ASSERT_EQ(capture.error, "");
  ASSERT_EQ(capture.exitCode, 0);
  ASSERT_GT(capture.answers, 0) << problem.name << ": clang asked nothing";

  auto whole = testing::readWhole(capture.stream);
  ASSERT_FALSE(whole.error) << *whole.error;
  int observations = 0, contexts = 0;
  for (const auto& e : whole.events) {
    observations += e.kind == EventKind::kObservation;
    contexts += e.kind == EventKind::kContext;
    if (e.kind == EventKind::kObservation)
      EXPECT_EQ(e.tensors.size(), whole.header.features.size());
  }
  EXPECT_EQ(observations, capture.answers);
  EXPECT_GE(contexts, 1);
  ASSERT_TRUE(whole.header.advice);
  EXPECT_FALSE(whole.header.score);

  // The header's specs round-trip to clang's own bytes.
  EXPECT_EQ(whole.header.toJson() + "\n",
            capture.stream.substr(0, capture.stream.find('\n') + 1));
  auto rewritten = testing::rewrite(whole.header, whole.events);
  ASSERT_TRUE(rewritten.ok()) << rewritten.error().message();
  EXPECT_TRUE(*rewritten == capture.stream) << problem.name << ": writer output differs";

  EXPECT_EQ(testing::readByteByByte(capture.stream).events, whole.events);
  for (uint32_t seed : {1u, 2u, 3u})
    EXPECT_EQ(testing::readRandomChunks(capture.stream, seed, 4000).events, whole.events);
}

INSTANTIATE_TEST_SUITE_P(Clang22, GoldenStream, ::testing::Values(0, 1, 2),
                         [](const auto& info) {
                           std::string name = problems()[info.param].name;
                           for (auto& c : name)
                             if (c == '-')
                               c = '_';
                           return name;
                         });

} // namespace
} // namespace mlgo::protocol
