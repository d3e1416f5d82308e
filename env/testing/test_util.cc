//===- env/testing/test_util.cc - helpers for env/ tests -------------------===//
#include "test_util.h"

#include "mlgo/corpus/extract.h"
#include "mlgo/env/run_compile.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mlgo::env::testing {

namespace fs = std::filesystem;

size_t openDescriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

size_t childProcesses() {
  size_t count = 0;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    std::string pid;
    while (in >> pid)
      ++count;
  }
  return count;
}

size_t entriesWithPrefix(const fs::path& dir, std::string_view prefix) {
  size_t count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().starts_with(prefix))
      ++count;
  return count;
}

void writeFile(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << "cannot write " << path;
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

namespace {
protocol::TensorSpec spec(std::string name, protocol::ElementType type,
                          std::vector<int64_t> shape) {
  return *protocol::TensorSpec::create(std::move(name), type, std::move(shape));
}

template <typename T> void put(std::vector<std::byte>& out, T value) {
  std::byte bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}
} // namespace

protocol::LogHeader inliningLikeHeader() {
  using protocol::ElementType;
  protocol::LogHeader header;
  header.features = {spec("a", ElementType::kInt64, {1}), spec("b", ElementType::kFloat, {2}),
                     spec("inlining_default", ElementType::kInt64, {1})};
  header.advice = spec("inlining_decision", ElementType::kInt64, {1});
  return header;
}

protocol::LogHeader evictionLikeHeader() {
  using protocol::ElementType;
  protocol::LogHeader header;
  header.features = {spec("mask", ElementType::kInt64, {1, 4}),
                     spec("weight", ElementType::kFloat, {1, 4})};
  header.advice = spec("index_to_evict", ElementType::kInt64, {1});
  return header;
}

std::vector<std::byte> inliningObservation(int64_t a, float b0, float b1, int64_t defaultDecision) {
  std::vector<std::byte> out;
  put(out, a);
  put(out, b0);
  put(out, b1);
  put(out, defaultDecision);
  return out;
}

std::vector<std::byte> evictionObservation(std::array<int64_t, 4> mask) {
  std::vector<std::byte> out;
  for (int64_t m : mask)
    put(out, m);
  for (int i = 0; i < 4; ++i)
    put(out, 0.25f * static_cast<float>(i));
  return out;
}

std::string buildStream(const protocol::LogHeader& header,
                        const std::vector<ScriptedContext>& contexts) {
  protocol::StreamWriter writer(header);
  std::string out;
  writer.writeHeader(out);
  for (const ScriptedContext& context : contexts) {
    writer.writeContext(out, context.name);
    for (const auto& observation : context.observations) {
      auto st = writer.writeObservation(out, std::span<const std::byte>(observation));
      EXPECT_TRUE(st.ok()) << st.error().message();
    }
  }
  return out;
}

fs::path writeScript(const fs::path& dir, const std::string& name,
                     const std::vector<std::string>& lines) {
  std::string text = "mlgo-fake-compiler\n";
  for (const std::string& line : lines)
    text += line + "\n";
  fs::path path = dir / (name + ".script");
  writeFile(path, text);
  return path;
}

CompileCommand fakeCommand(const fs::path& dir, const fs::path& script) {
  CompileCommand command;
  command.channelBase = dir / "channel";
  command.objectPath = dir / "out.o";
  command.argv = {MLGO_FAKE_COMPILER,
                  "-cc1",
                  "-O2",
                  "-mllvm",
                  "-inliner-interactive-channel-base=" + command.channelBase.string(),
                  "-x",
                  "ir",
                  script.string(),
                  "-o",
                  command.objectPath.string()};
  return command;
}

fs::path buildTestCorpus(const fs::path& dir, const std::vector<TestSource>& sources) {
  support::CleanupScope scope; // Outlives what is registered in it.
  fs::path obj = dir / "obj";
  fs::create_directories(obj);
  for (const TestSource& source : sources) {
    fs::path c = obj / (source.name + ".c");
    writeFile(c, source.code);
    CompileCommand command;
    command.argv = {MLGO_CLANG};
    command.argv.insert(command.argv.end(), source.flags.begin(), source.flags.end());
    for (const char* arg : {"-Xclang", "-fembed-bitcode=all", "-c"})
      command.argv.push_back(arg);
    command.argv.push_back(c.string());
    command.argv.push_back("-o");
    command.argv.push_back((obj / (source.name + ".o")).string());
    command.objectPath = obj / (source.name + ".o");
    auto report = runCompile(scope, command, std::chrono::seconds(120));
    EXPECT_TRUE(report.ok()) << report.error().message();
  }
  corpus::ExtractOptions options;
  options.input = obj;
  options.inputType = corpus::InputType::kDirectory;
  options.outputDir = dir / "corpus";
  options.numWorkers = 1;
  auto summary = corpus::extractCorpus(options);
  EXPECT_TRUE(summary.ok()) << summary.error().message();
  if (summary.ok())
    EXPECT_EQ(summary->modules.size(), sources.size());
  return options.outputDir;
}

ReadelfExecutable parseReadelfExecutable(const std::string& listing) {
  ReadelfExecutable out;
  std::istringstream lines(listing);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("] ") == std::string::npos)
      continue;
    std::istringstream fields(line.substr(line.find("] ") + 2));
    std::string name, type, address, offset, size, es, flags;
    fields >> name >> type >> address >> offset >> size >> es >> flags;
    if (flags.find('X') != std::string::npos) {
      out.bytes += std::stoull(size, nullptr, 16);
      ++out.sections;
    }
  }
  return out;
}

} // namespace mlgo::env::testing
