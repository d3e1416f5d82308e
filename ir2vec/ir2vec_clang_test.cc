//===- ir2vec/ir2vec_clang_test.cc - against clang-22, opt and llvm-ir2vec -===//
///
/// \file
/// Integration tests with LLVM's real tools: the demo corpus sources are
/// compiled with clang-22; our triplets are compared with `opt | llvm-ir2vec
/// triplets`, our embeddings with `llvm-ir2vec embeddings`, a trained
/// vocabulary is checked on held-out triplets, and clang's ML inliner is run
/// interactively with our vocabularies.
///
//===----------------------------------------------------------------------===//
#include "process_test_util.h"
#include "test_util.h"

#include "mlgo/ir2vec/embedder.h"
#include "mlgo/ir2vec/link_prediction.h"
#include "mlgo/ir2vec/transe.h"
#include "mlgo/ir2vec/triplet_generator.h"
#include "mlgo/ir2vec/vocabulary.h"

#include <llvm/Support/JSON.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace mlgo::ir2vec {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::run;
using testing::spawn;
using testing::waitFor;

/// Demo corpus modules compiled once for the whole suite.
class Ir2VecClangTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::vector<fs::path> sources;
    for (const auto& entry : fs::directory_iterator(fs::path(MLGO_SOURCE_DIR) / "data/demo_corpus/src"))
      if (entry.path().extension() == ".c" || entry.path().extension() == ".cpp")
        sources.push_back(entry.path());
    std::sort(sources.begin(), sources.end());
    sources.resize(std::min<size_t>(sources.size(), 8));
    modules_ = new std::vector<fs::path>();
    for (const fs::path& source : sources) {
      fs::path bc = *dir_ / (source.stem().string() + ".bc");
      std::vector<std::string> argv = {MLGO_CLANG,   "-O0", "-Xclang",       "-disable-O0-optnone",
                                       "-emit-llvm", "-c",  source.string(), "-o",
                                       bc.string()};
      if (source.extension() == ".cpp")
        argv.insert(argv.begin() + 1, {"-x", "c++", "-std=c++17"});
      ProcessResult r = run(argv, *dir_ / "clang.out");
      ASSERT_EQ(r.exitCode, 0) << source << ": " << r.err;
      modules_->push_back(bc);
    }
  }
  static void TearDownTestSuite() {
    delete modules_;
    delete dir_;
  }

  static const std::vector<fs::path>& modules() { return *modules_; }
  static const testing::TempDir& dir() { return *dir_; }

  /// A quickly trained vocabulary of dimension `dim`, saved under `name`.
  static fs::path trainVocabulary(unsigned dim, const std::string& name) {
    TripletOptions options;
    options.levels = {OptLevel::kO0, OptLevel::kO2};
    Result<TripletSet> set = generateTriplets(modules(), options);
    EXPECT_TRUE(set.ok());
    TransEConfig config;
    config.dimension = dim;
    config.epochs = 50;
    Result<TransEModel> model = trainTransE(*set, config);
    EXPECT_TRUE(model.ok());
    fs::path path = *dir_ / name;
    EXPECT_TRUE(model->toVocabulary(set->entities)->save(path).ok());
    return path;
  }

  static testing::TempDir* dir_;
  static std::vector<fs::path>* modules_;
};

testing::TempDir* Ir2VecClangTest::dir_ = nullptr;
std::vector<fs::path>* Ir2VecClangTest::modules_ = nullptr;

TEST_F(Ir2VecClangTest, TripletsMatchOptThenLlvmIr2vec) {
  ASSERT_GE(modules().size(), 4u);
  for (auto [level, flag] : {std::pair{OptLevel::kO0, "-O0"}, std::pair{OptLevel::kO2, "-O2"},
                             std::pair{OptLevel::kOz, "-Oz"}}) {
    std::vector<Triplet> theirs;
    size_t relations = 0;
    for (const fs::path& m : modules()) {
      fs::path optimized = dir().path() / "opt.bc", triplets = dir().path() / "t.txt";
      ASSERT_EQ(
          run({MLGO_LLVM_OPT, flag, m.string(), "-o", optimized.string()}, dir() / "o").exitCode,
          0);
      ASSERT_EQ(run({MLGO_LLVM_IR2VEC, "triplets", optimized.string(), "-o", triplets.string()},
                    dir() / "o")
                    .exitCode,
                0);
      Result<TripletSet> set = TripletSet::load(triplets); // LLVM's format
      ASSERT_TRUE(set.ok()) << set.error().message();
      theirs.insert(theirs.end(), set->triplets.begin(), set->triplets.end());
      relations = std::max(relations, set->relations.size());
    }
    std::sort(theirs.begin(), theirs.end());
    theirs.erase(std::unique(theirs.begin(), theirs.end()), theirs.end());

    TripletOptions options;
    options.levels = {level};
    options.includePredicates = false;
    Result<TripletSet> ours = generateTriplets(modules(), options);
    ASSERT_TRUE(ours.ok()) << ours.error().message();
    EXPECT_EQ(ours->triplets, theirs) << "level " << flag;
    EXPECT_EQ(ours->relations.size(), relations) << "level " << flag;
  }
}

TEST_F(Ir2VecClangTest, TrainedVocabularyBeatsRandomOnHeldOutTriplets) {
  TripletOptions options;
  options.levels = {OptLevel::kO0, OptLevel::kO2, OptLevel::kOz};
  Result<TripletSet> all = generateTriplets(modules(), options);
  ASSERT_TRUE(all.ok()) << all.error().message();
  auto [train, test] = splitTriplets(*all, 0.1, 1);
  ASSERT_GE(test.triplets.size(), 30u);
  TransEConfig config;
  config.dimension = 32;
  config.epochs = 300;
  config.margin = 3;
  config.learningRate = 0.005;
  Result<TransEModel> trained = trainTransE(train, config);
  config.trainEntities = false; // random entity vectors, relations fitted to them
  Result<TransEModel> random = trainTransE(train, config);
  ASSERT_TRUE(trained.ok() && random.ok());
  LinkPredictionMetrics good = evaluateLinkPrediction(*trained, test.triplets, all->triplets);
  LinkPredictionMetrics bad = evaluateLinkPrediction(*random, test.triplets, all->triplets);
  std::printf("%zu triplets, %zu held out; trained: hits@10 %.3f mean rank %.2f MRR %.3f; "
              "random: hits@10 %.3f mean rank %.2f MRR %.3f\n",
              all->triplets.size(), test.triplets.size(), good.hitsAt10, good.meanRank,
              good.meanReciprocalRank, bad.hitsAt10, bad.meanRank, bad.meanReciprocalRank);
  EXPECT_GT(good.hitsAt10, bad.hitsAt10 + 0.25);
  EXPECT_LT(2 * good.meanRank, bad.meanRank);
}

/// The vectors printed by `llvm-ir2vec embeddings` (two decimals), in order.
std::vector<std::vector<std::string>> llvmVectors(const std::string& output) {
  std::vector<std::vector<std::string>> vectors;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    std::string line = output.substr(pos, end == std::string::npos ? end : end - pos);
    pos = end == std::string::npos ? output.size() : end + 1;
    size_t open = line.rfind(" [");
    if (line.starts_with("Function: ") || open == std::string::npos || !line.ends_with("]"))
      continue;
    std::vector<std::string> numbers;
    char buffer[64];
    int used = 0;
    for (const char* p = line.c_str() + open + 2; std::sscanf(p, "%63s%n", buffer, &used) == 1;
         p += used)
      if (std::string(buffer) != "]")
        numbers.emplace_back(buffer);
    vectors.push_back(numbers);
  }
  return vectors;
}

std::vector<std::string> twoDecimals(const std::vector<double>& vector) {
  std::vector<std::string> out;
  for (double x : vector) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.2f", x);
    out.emplace_back(buffer);
  }
  return out;
}

TEST_F(Ir2VecClangTest, EmbeddingsMatchLlvmIr2vecToItsPrecision) {
  fs::path vocabPath = trainVocabulary(12, "v12.json");
  Result<Vocabulary> vocabulary = Vocabulary::load(vocabPath);
  ASSERT_TRUE(vocabulary.ok());
  for (EmbeddingKind kind : {EmbeddingKind::kSymbolic, EmbeddingKind::kFlowAware}) {
    Result<Embedder> embedder = Embedder::create(*vocabulary, kind);
    ASSERT_TRUE(embedder.ok());
    for (EmbeddingLevel level :
         {EmbeddingLevel::kFunction, EmbeddingLevel::kBasicBlock, EmbeddingLevel::kInstruction}) {
      for (const fs::path& m : modules()) {
        fs::path out = dir() / "emb.txt";
        ProcessResult r =
            run({MLGO_LLVM_IR2VEC, "embeddings", "--ir2vec-vocab-path=" + vocabPath.string(),
                 "--ir2vec-kind=" + std::string(kindName(kind)),
                 "--level=" + std::string(levelName(level)), m.string(), "-o", out.string()},
                dir() / "o");
        ASSERT_EQ(r.exitCode, 0) << r.err;
        std::vector<std::vector<std::string>> theirs = llvmVectors(testing::readFile(out));
        Result<ModuleEmbeddings> ours = embedder->embed(m, level);
        ASSERT_TRUE(ours.ok()) << ours.error().message();
        ASSERT_EQ(ours->records.size(), theirs.size()) << m << " " << levelName(level);
        ASSERT_FALSE(theirs.empty());
        for (size_t i = 0; i < theirs.size(); ++i)
          ASSERT_EQ(twoDecimals(ours->records[i].vector), theirs[i])
              << m << " " << levelName(level) << " " << kindName(kind) << " record " << i;
      }
    }
  }
}

/// Drives clang's ML inliner in interactive mode with `vocab`, answering "no"
/// to every decision. Returns the embedding dimensions clang announced.
std::vector<int64_t> runInteractiveInliner(const fs::path& vocab, const fs::path& source,
                                           const fs::path& work, ProcessResult& result) {
  fs::path base = work / "channel";
  fs::path in = base.string() + ".in", out = base.string() + ".out";
  fs::remove(in);
  fs::remove(out);
  EXPECT_EQ(mkfifo(in.c_str(), 0600), 0);
  EXPECT_EQ(mkfifo(out.c_str(), 0600), 0);
  std::vector<std::string> argv = {MLGO_CLANG,
                                   "-O2",
                                   "-c",
                                   source.string(),
                                   "-o",
                                   (work / "x.o").string(),
                                   "-fno-crash-diagnostics",
                                   "-mllvm",
                                   "-enable-ml-inliner=release",
                                   "-mllvm",
                                   "-inliner-interactive-channel-base=" + base.string()};
  for (const std::string& flag : inlinerVocabularyFlags(vocab))
    argv.push_back(flag);
  pid_t pid = spawn(argv, work / "clang.out", work / "clang.err");
  EXPECT_GT(pid, 0);
  std::vector<int64_t> dims;
  int toClang = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((toClang = open(in.c_str(), O_WRONLY | O_NONBLOCK)) < 0 &&
         std::chrono::steady_clock::now() < deadline) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) { // clang gave up before opening
      result = {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                testing::readFile(work / "clang.err")};
      return dims;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  fcntl(toClang, F_SETFL, fcntl(toClang, F_GETFL) & ~O_NONBLOCK);
  int fromClang = open(out.c_str(), O_RDONLY);
  std::string buffer;
  auto fill = [&](size_t need) { // reads until `need` bytes are buffered or EOF
    char chunk[4096];
    while (buffer.size() < need) {
      pollfd p{fromClang, POLLIN, 0};
      if (poll(&p, 1, 30000) <= 0)
        return false;
      ssize_t n = read(fromClang, chunk, sizeof chunk);
      if (n <= 0)
        return false;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    return true;
  };
  auto line = [&](std::string& text) {
    size_t nl;
    while ((nl = buffer.find('\n')) == std::string::npos)
      if (!fill(buffer.size() + 1))
        return false;
    text = buffer.substr(0, nl);
    buffer.erase(0, nl + 1);
    return true;
  };
  std::string header;
  size_t featureBytes = 0;
  if (line(header)) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(header);
    EXPECT_TRUE(bool(parsed));
    for (const llvm::json::Value& f : *parsed->getAsObject()->getArray("features")) {
      const llvm::json::Object& spec = *f.getAsObject();
      size_t count = 1;
      for (const llvm::json::Value& d : *spec.getArray("shape"))
        count *= static_cast<size_t>(*d.getAsInteger());
      featureBytes += count * (*spec.getString("type") == "float" ? 4 : 8);
      if (spec.getString("name")->ends_with("_embedding"))
        dims.push_back(*(*spec.getArray("shape"))[0].getAsInteger());
    }
    std::string record;
    while (line(record)) {
      if (!record.starts_with("{\"observation\""))
        continue;
      EXPECT_TRUE(fill(featureBytes + 1));
      buffer.erase(0, featureBytes + 1);
      int64_t no = 0;
      EXPECT_EQ(write(toClang, &no, sizeof no), ssize_t(sizeof no));
    }
  }
  close(fromClang);
  close(toClang);
  result = {waitFor(pid, 60), testing::readFile(work / "clang.err")};
  return dims;
}

TEST_F(Ir2VecClangTest, ClangInlinerLoadsOurVocabularies) {
  fs::path trained = trainVocabulary(16, "v16.json");
  const fs::path& source = modules()[0]; // clang -O2 on pre-optimisation bitcode
  for (auto [vocab, dim] : {std::pair{fs::path(MLGO_IR2VEC_DEFAULT_VOCAB), int64_t{75}},
                            std::pair{trained, int64_t{16}}}) {
    ProcessResult result;
    std::vector<int64_t> dims = runInteractiveInliner(vocab, source, dir().path(), result);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    EXPECT_THAT(dims, ::testing::ElementsAre(dim, dim)) << "callee and caller embeddings";
  }
}

TEST_F(Ir2VecClangTest, ClangAndLlvmIr2vecRejectWhatWeReject) {
  std::string json = testing::readFile(MLGO_IR2VEC_DEFAULT_VOCAB);
  json.replace(json.find("\"Types\""), 7, "\"Typos\"");
  fs::path bad = dir() / "bad.json";
  testing::writeFile(bad, json);
  EXPECT_THAT(Vocabulary::load(bad).error().message(), HasSubstr("missing the 'Types' section"));
  ProcessResult r = run({MLGO_LLVM_IR2VEC, "embeddings", "--ir2vec-vocab-path=" + bad.string(),
                         modules()[0].string(), "-o", (dir() / "e.txt").string()},
                        dir() / "o");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_THAT(r.err, HasSubstr("Missing 'Types' section"));
  ProcessResult clang;
  runInteractiveInliner(bad, modules()[0], dir().path(), clang);
  EXPECT_NE(clang.exitCode, 0);
  EXPECT_THAT(clang.err, HasSubstr("Missing 'Types' section"));
}

TEST_F(Ir2VecClangTest, DefaultVocabularyIsCompleteAndMatchesLlvm) {
  Result<Vocabulary> vocabulary = Vocabulary::load(MLGO_IR2VEC_DEFAULT_VOCAB);
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.error().message();
  EXPECT_EQ(vocabulary->dimension(), 75u);
  EXPECT_TRUE(vocabulary->missingEntities().empty());
  EXPECT_TRUE(vocabulary->unknownKeys().empty());
  Result<Embedder> embedder = Embedder::create(*vocabulary);
  ASSERT_TRUE(embedder.ok());
  fs::path out = dir() / "default.txt";
  ProcessResult r = run({MLGO_LLVM_IR2VEC, "embeddings",
                         std::string("--ir2vec-vocab-path=") + MLGO_IR2VEC_DEFAULT_VOCAB,
                         modules()[0].string(), "-o", out.string()},
                        dir() / "o");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::vector<std::string>> theirs = llvmVectors(testing::readFile(out));
  Result<ModuleEmbeddings> ours = embedder->embed(modules()[0], EmbeddingLevel::kFunction);
  ASSERT_TRUE(ours.ok());
  ASSERT_EQ(ours->records.size(), theirs.size());
  for (size_t i = 0; i < theirs.size(); ++i)
    EXPECT_EQ(twoDecimals(ours->records[i].vector), theirs[i]);
  // The module vector the environment reports is the sum of these.
  Result<std::vector<double>> total = embedder->moduleVector(modules()[0]);
  ASSERT_TRUE(total.ok());
  double expected = 0;
  for (const EmbeddingRecord& record : ours->records)
    expected += record.vector[0];
  EXPECT_NEAR((*total)[0], expected, 1e-9);
}

} // namespace
} // namespace mlgo::ir2vec
