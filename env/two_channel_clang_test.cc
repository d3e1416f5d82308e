//===- env/two_channel_clang_test.cc - eviction and priority in one compile -===//
///
/// One CompilerSession serving clang-22's eviction (channel 0) and priority
/// (channel 1) channels in one -O2 compile of the demo's sha256.c, every
/// eviction answered "evict nothing" (the mask's last column; the first
/// allowed one should the mask forbid it) and every priority weight x 1000
/// clamped to [0, 2^32). The questions must arrive in order on both
/// channels and the compile must give an object; the count on each channel
/// and each function's run-length pattern (`P29 E1 P3 ...`) must be what
/// the independent Python host (research/channel_pair.py, the same answers)
/// gets from the same compile.
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/compiler_session.h"

#include "mlgo/env/problem.h"
#include "mlgo/env/run_compile.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(MLGO_SOURCE_DIR) / "data" / "demo_corpus" / "src" / "sha256.c";

struct Question {
  size_t channel;
  std::string context;
  int64_t id;
};

/// The eviction answer: the last column when the mask allows it, else the
/// first allowed one (research/channel_pair.py's `self`).
int64_t evictNothing(const protocol::LogHeader& header, const Observation& obs) {
  auto mask = header.featureIndex("mask");
  EXPECT_TRUE(mask);
  const protocol::TensorSpec& spec = header.features[*mask];
  auto columns = static_cast<size_t>(spec.elementCount());
  auto allowed = [&](size_t i) {
    return protocol::elementAsDouble(spec.type(), obs.tensors[*mask].data(), i) == 1;
  };
  if (allowed(columns - 1))
    return static_cast<int64_t>(columns - 1);
  for (size_t i = 0; i < columns; ++i)
    if (allowed(i))
      return static_cast<int64_t>(i);
  return static_cast<int64_t>(columns - 1);
}

/// The priority answer: weight x 1000, clamped to [0, 2^32) in float (NaN: 0).
float weightTimes1000(const protocol::LogHeader& header, const Observation& obs) {
  auto weight = header.featureIndex("weight");
  EXPECT_TRUE(weight);
  double value =
      protocol::elementAsDouble(header.features[*weight].type(), obs.tensors[*weight].data(), 0) *
      1000;
  if (std::isnan(value))
    value = 0;
  double below = std::nextafter(4294967296.0f, 0.0f);
  return static_cast<float>(std::clamp(value, 0.0, below));
}

/// Per channel the questions, per function its pattern, as the Python host prints them.
std::string summarize(const CompileReport& report, bool objectIsElf,
                      const std::vector<Question>& questions) {
  size_t evictions = 0;
  std::vector<std::string> order;
  std::map<std::string, std::string> tags;
  for (const Question& q : questions) {
    evictions += q.channel == 0;
    if (!tags.contains(q.context))
      order.push_back(q.context);
    tags[q.context] += q.channel == 0 ? 'E' : 'P';
  }
  std::string out = "exit " + std::to_string(report.exit.code) + " object " +
                    std::to_string(objectIsElf) + "\nE " + std::to_string(evictions) + " P " +
                    std::to_string(questions.size() - evictions) + "\n";
  for (const std::string& name : order) {
    out += name;
    const std::string& t = tags[name];
    for (size_t i = 0; i < t.size();) {
      size_t j = t.find_first_not_of(t[i], i);
      j = j == std::string::npos ? t.size() : j;
      out += " " + std::string(1, t[i]) + std::to_string(j - i);
      i = j;
    }
    out += "\n";
  }
  return out;
}

/// The same compile and answers by research/channel_pair.py, summarized alike.
std::string pythonSummary(support::CleanupScope& scope) {
  std::string program =
      "import sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "from channel_pair import compile_serving, evict_answer, priority_answer\n"
      "import two_channels as t\n"
      "r = compile_serving(sys.argv[2], {'evict': evict_answer('self'),\n"
      "                    'priority': priority_answer('weight')}, clang=sys.argv[3])\n"
      "print('BEGIN')\n"
      "print('exit', r.returncode, 'object', int(r.object_ok))\n"
      "print('E', t.questions(r, 'evict'), 'P', t.questions(r, 'priority'))\n"
      "for name, rows in t.per_function(r).items():\n"
      "    print(name, t.pattern(rows))\n"
      "print('END')\n";
  CompileCommand python;
  python.argv = {"/usr/bin/python3", "-c",      program, std::string(MLGO_SOURCE_DIR) + "/research",
                 kSource.string(),   MLGO_CLANG};
  auto ran = runCompile(scope, python, std::chrono::minutes(2));
  EXPECT_TRUE(ran.ok()) << (ran.ok() ? "" : ran.error().message());
  if (!ran.ok())
    return {};
  size_t begin = ran->output.find("BEGIN\n"), end = ran->output.find("END\n");
  EXPECT_NE(begin, std::string::npos) << ran->output;
  EXPECT_NE(end, std::string::npos) << ran->output;
  if (begin == std::string::npos || end == std::string::npos)
    return {};
  return ran->output.substr(begin + 6, end - begin - 6);
}

/// clang -O2 -c sha256.c with the eviction channel (0) and the priority one (1).
CompileCommand twoChannelCommand(const fs::path& dir) {
  CompileCommand command;
  command.objectPath = dir / "out.o";
  command.channelBase = dir / "evict";
  command.extraChannels = {dir / "priority"};
  command.argv = {MLGO_CLANG,
                  "-O2",
                  "-c",
                  kSource.string(),
                  "-o",
                  command.objectPath.string(),
                  "-fno-crash-diagnostics"};
  auto add = [&](std::string_view problem, const fs::path& base) {
    for (std::string& arg : (*findProblem(problem))->interactiveArgs(base.string(), {}))
      command.argv.push_back(std::move(arg));
  };
  add("regalloc", command.channelBase);
  add("regalloc-priority", command.extraChannels[0]);
  return command;
}

/// Answers every question (evictNothing, weightTimes1000) until kEnd; the
/// questions in the order they came.
std::vector<Question> answerAll(CompilerSession& session) {
  std::vector<Question> questions;
  Observation obs;
  for (;;) {
    auto event = session.next(obs);
    if (!event.ok() || *event == SessionEvent::kEnd) {
      EXPECT_TRUE(event.ok()) << event.error().message();
      return questions;
    }
    questions.push_back({obs.channel, std::string(obs.context), obs.id});
    const protocol::LogHeader* header = session.channelHeader(obs.channel);
    EXPECT_NE(header, nullptr);
    if (header == nullptr)
      return questions;
    std::vector<std::byte> advice(header->advice->byteSize());
    if (obs.channel == 0) {
      EXPECT_EQ(header->advice->type(), protocol::ElementType::kInt64);
      int64_t index = evictNothing(*header, obs);
      std::memcpy(advice.data(), &index, std::min(sizeof index, advice.size()));
    } else {
      EXPECT_EQ(header->advice->type(), protocol::ElementType::kFloat);
      float priority = weightTimes1000(*header, obs);
      std::memcpy(advice.data(), &priority, std::min(sizeof priority, advice.size()));
    }
    if (auto st = session.answer(advice); !st.ok()) {
      ADD_FAILURE() << st.error().message();
      return questions;
    }
  }
}

/// On each channel a function's ids run 0, 1, 2, ...; a function's questions
/// come together (none resumes after another function asked).
void expectInOrder(const std::vector<Question>& questions) {
  std::map<std::pair<size_t, std::string>, int64_t> nextId;
  std::set<std::string> finished;
  for (size_t i = 0; i < questions.size(); ++i) {
    const Question& q = questions[i];
    int64_t expected = nextId[std::pair(q.channel, q.context)]++;
    EXPECT_EQ(q.id, expected) << q.context << " on channel " << q.channel;
    if (i > 0 && questions[i - 1].context != q.context) {
      EXPECT_TRUE(finished.insert(questions[i - 1].context).second);
      EXPECT_FALSE(finished.contains(q.context)) << q.context << " resumed";
    }
  }
}

TEST(TwoChannelClangTest, EvictionAndPriorityServedInOneCompile) {
  support::CleanupScope scope; // Outlives what is registered in it.
  size_t fds = testing::openDescriptors();
  auto dir = support::TempDir::create(scope, "mlgo-env-test-");
  ASSERT_TRUE(dir.ok());
  CompileCommand command = twoChannelCommand(dir->path());
  SessionLimits limits;
  limits.scope = &scope;
  limits.compileTimeout = std::chrono::minutes(2);
  auto session = startCompilerSession(std::move(*dir), command, limits);
  ASSERT_TRUE(session.ok()) << session.error().message();
  std::vector<Question> questions = answerAll(**session);
  auto report = (*session)->finish();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->exit.success());
  char magic[4] = {};
  std::ifstream(command.objectPath, std::ios::binary).read(magic, 4);
  bool elf = std::memcmp(magic,
                         "\x7f"
                         "ELF",
                         4) == 0;
  EXPECT_TRUE(elf);

  // Both channels asked; every function named itself on both.
  ASSERT_EQ(report->channels.size(), 2u);
  EXPECT_GT(report->channels[0].observations, 0u);
  EXPECT_GT(report->channels[1].observations, 0u);
  EXPECT_EQ(report->channels[0].observations + report->channels[1].observations, questions.size());
  EXPECT_EQ(report->channels[0].contexts, report->channels[1].contexts);
  expectInOrder(questions);

  EXPECT_EQ(summarize(*report, elf, questions), pythonSummary(scope));
  session->reset();
  EXPECT_EQ(testing::childProcesses(), 0u);
  EXPECT_EQ(testing::openDescriptors(), fds);
}

} // namespace
} // namespace mlgo::env
