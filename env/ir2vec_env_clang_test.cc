//===- env/ir2vec_env_clang_test.cc - IR2Vec in episodes, with clang-22 ----===//
///
/// `EnvironmentOptions::ir2vecVocabulary` with the real clang-22 and the
/// shipped vocabulary: the inliner's embedding features appear at the
/// vocabulary's dimension and come from the file the host names, answering
/// the default still reproduces a plain compile, and every reset carries the
/// module embedding (for every problem).
///
//===----------------------------------------------------------------------===//
#include "mlgo/env/environment.h"

#include "mlgo/ir2vec/embedder.h"
#include "mlgo/ir2vec/entities.h"
#include "mlgo/ir2vec/vocabulary.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mlgo::env {
namespace {

constexpr unsigned kDimension = 75; // ir2vec/vocab/demo-75d.json

class Ir2VecEnvironmentTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-test-");
    ASSERT_TRUE(dir.ok());
    scratch_ = std::move(*dir);
  }

  std::unique_ptr<Environment> make(std::string problem, std::filesystem::path vocabulary) {
    EnvironmentOptions options;
    options.problem = std::move(problem);
    options.clang = MLGO_CLANG;
    options.cacheDir = scratch_.path() / "cache";
    options.jobs = 2;
    options.ir2vecVocabulary = std::move(vocabulary);
    auto env = Environment::create(options);
    EXPECT_TRUE(env.ok()) << env.error().message();
    return env.ok() ? std::move(*env) : nullptr;
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir scratch_;
};

/// The values of feature `name` in an observation.
std::vector<float> floatFeature(const Environment& env, const AgentObservation& observation,
                                std::string_view name) {
  const EnvironmentDescription& d = env.describe();
  for (size_t i = 0; i < d.observationSpecs.size(); ++i) {
    if (d.observationSpecs[i].name() != name)
      continue;
    std::vector<float> values(d.observationSpecs[i].elementCount());
    EXPECT_LE(d.observationOffsets[i] + values.size() * sizeof(float), observation.bytes.size());
    std::memcpy(values.data(), observation.bytes.data() + d.observationOffsets[i],
                values.size() * sizeof(float));
    return values;
  }
  ADD_FAILURE() << "no feature " << name;
  return {};
}

bool allZero(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float v) { return v == 0; });
}

/// The module embedding the other way round: the function-level records of
/// Embedder::embed, summed here.
std::vector<double> summedFunctionVectors(const std::filesystem::path& bitcode,
                                          const ir2vec::Vocabulary& vocabulary) {
  auto embedder = ir2vec::Embedder::create(vocabulary);
  EXPECT_TRUE(embedder.ok());
  auto embedded = embedder->embed(bitcode, ir2vec::EmbeddingLevel::kFunction);
  EXPECT_TRUE(embedded.ok()) << embedded.error().message();
  std::vector<double> sum(vocabulary.dimension(), 0.0);
  for (const auto& record : embedded->records)
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += record.vector[i];
  return sum;
}

TEST_F(Ir2VecEnvironmentTest, InliningShowsEmbeddingsAndTheDefaultStillScoresZero) {
  auto loaded = ir2vec::Vocabulary::load(ir2vec::defaultVocabularyPath());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  auto env = make("inlining", ir2vec::defaultVocabularyPath());
  ASSERT_TRUE(env);
  const EnvironmentDescription& d = env->describe();
  EXPECT_EQ(d.ir2vecDimension, kDimension);
  EXPECT_EQ(d.ir2vecVocabulary, ir2vec::defaultVocabularyPath().lexically_normal());
  EXPECT_TRUE(d.ir2vecMissingEntities.empty());
  for (std::string_view name : {"callee_embedding", "caller_embedding"}) {
    auto spec = std::find_if(d.observationSpecs.begin(), d.observationSpecs.end(),
                             [&](const auto& s) { return s.name() == name; });
    ASSERT_NE(spec, d.observationSpecs.end()) << name;
    EXPECT_EQ(spec->type(), protocol::ElementType::kFloat);
    EXPECT_EQ(spec->elementCount(), kDimension);
  }

  std::vector<std::vector<double>> moduleEmbeddings;
  const auto& modules = env->corpus().modules();
  for (size_t m = 0; m < 4; ++m) {
    SCOPED_TRACE(modules[m].name);
    auto reset = env->reset({modules[m].name, std::nullopt, {}});
    ASSERT_TRUE(reset.ok()) << reset.error().message();
    ASSERT_TRUE(reset->moduleEmbedding);
    const std::vector<double>& embedding = *reset->moduleEmbedding;
    ASSERT_EQ(embedding.size(), kDimension);
    std::vector<double> expected = summedFunctionVectors(modules[m].bitcodePath, *loaded);
    for (size_t i = 0; i < kDimension; ++i)
      EXPECT_NEAR(embedding[i], expected[i], 1e-9 * (1 + std::abs(expected[i]))) << i;
    EXPECT_TRUE(std::any_of(embedding.begin(), embedding.end(), [](double v) { return v != 0; }));
    moduleEmbeddings.push_back(embedding);

    StepResult step = reset->step;
    int nonZeroCallee = 0, nonZeroCaller = 0;
    while (!step.terminated && !step.truncated) {
      auto callee = floatFeature(*env, step.observation, "callee_embedding");
      auto caller = floatFeature(*env, step.observation, "caller_embedding");
      ASSERT_EQ(callee.size(), kDimension);
      for (float v : callee)
        ASSERT_TRUE(std::isfinite(v));
      for (float v : caller)
        ASSERT_TRUE(std::isfinite(v));
      nonZeroCallee += allZero(callee) ? 0 : 1;
      nonZeroCaller += allZero(caller) ? 0 : 1;
      ASSERT_TRUE(env->step(reset->episode, *step.defaultAction, step).ok());
    }
    ASSERT_TRUE(step.summary);
    EXPECT_GT(step.summary->observations, 0u);
    EXPECT_EQ(nonZeroCallee, static_cast<int>(step.summary->observations));
    EXPECT_EQ(nonZeroCaller, static_cast<int>(step.summary->observations));
    // The features are observations only: clang's own decisions, and so the
    // object, are those of the plain compile.
    EXPECT_EQ(step.reward, 0.0);
    EXPECT_EQ(step.summary->policyScore, step.summary->defaultScore);
  }
  // Different programs, different embeddings; the same program, the same one.
  for (size_t a = 0; a < moduleEmbeddings.size(); ++a)
    for (size_t b = a + 1; b < moduleEmbeddings.size(); ++b)
      EXPECT_NE(moduleEmbeddings[a], moduleEmbeddings[b]) << a << " " << b;
  auto again = env->reset({modules[0].name, std::nullopt, {}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again->moduleEmbedding, moduleEmbeddings[0]);
  EXPECT_TRUE(env->close(again->episode).ok());
}

// clang computes its features from the file the host names: with every
// vector of the vocabulary negated, so is every embedding, clang's and ours.
TEST_F(Ir2VecEnvironmentTest, ClangReadsTheVocabularyTheHostNames) {
  auto original = ir2vec::Vocabulary::load(ir2vec::defaultVocabularyPath());
  ASSERT_TRUE(original.ok());
  std::vector<double> negated;
  for (size_t id = 0; id < ir2vec::entityCount(); ++id)
    for (double v : original->vector(id))
      negated.push_back(-v);
  auto flipped = ir2vec::Vocabulary::fromValues(original->dimension(), std::move(negated));
  ASSERT_TRUE(flipped.ok());
  std::filesystem::path flippedPath = scratch_.path() / "negated.json";
  ASSERT_TRUE(flipped->save(flippedPath).ok());

  auto env = make("inlining", ir2vec::defaultVocabularyPath());
  auto negatedEnv = make("inlining", flippedPath);
  ASSERT_TRUE(env && negatedEnv);
  const std::string module = env->corpus().modules()[1].name;
  auto a = env->reset({module, std::nullopt, {}});
  auto b = negatedEnv->reset({module, std::nullopt, {}});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_FALSE(a->step.terminated || b->step.terminated);
  for (std::string_view name : {"callee_embedding", "caller_embedding"}) {
    auto x = floatFeature(*env, a->step.observation, name);
    auto y = floatFeature(*negatedEnv, b->step.observation, name);
    ASSERT_EQ(x.size(), y.size());
    EXPECT_FALSE(allZero(x)) << name;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(y[i], -x[i], 1e-4f * (1 + std::abs(x[i]))) << name << "[" << i << "]";
  }
  for (size_t i = 0; i < kDimension; ++i)
    EXPECT_NEAR((*b->moduleEmbedding)[i], -(*a->moduleEmbedding)[i], 1e-9);
  EXPECT_TRUE(env->close(a->episode).ok());
  EXPECT_TRUE(negatedEnv->close(b->episode).ok());
}

TEST_F(Ir2VecEnvironmentTest, RegallocGetsTheModuleEmbeddingAndTheSameFeatures) {
  auto with = make("regalloc", ir2vec::defaultVocabularyPath());
  auto without = make("regalloc", {});
  ASSERT_TRUE(with && without);
  EXPECT_EQ(with->describe().observationSpecs, without->describe().observationSpecs);
  EXPECT_EQ(with->describe().ir2vecDimension, kDimension);
  EXPECT_EQ(without->describe().ir2vecDimension, 0u);

  const std::string module = with->corpus().modules()[0].name;
  auto a = with->reset({module, std::nullopt, {}});
  auto b = without->reset({module, std::nullopt, {}});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->moduleEmbedding);
  EXPECT_EQ(a->moduleEmbedding->size(), kDimension);
  EXPECT_FALSE(b->moduleEmbedding);
  EXPECT_TRUE(with->close(a->episode).ok());
  EXPECT_TRUE(without->close(b->episode).ok());
}

// Traces switch the module embedding off and keep clang's features.
TEST_F(Ir2VecEnvironmentTest, ModuleEmbeddingCanBeSwitchedOff) {
  EnvironmentOptions options;
  options.problem = "inlining";
  options.clang = MLGO_CLANG;
  options.useDiskCache = false;
  options.ir2vecVocabulary = ir2vec::defaultVocabularyPath();
  options.moduleEmbeddings = false;
  auto featuresOnly = Environment::create(options);
  ASSERT_TRUE(featuresOnly.ok()) << featuresOnly.error().message();
  EXPECT_EQ((*featuresOnly)->describe().ir2vecDimension, kDimension);
  const std::string module = (*featuresOnly)->corpus().modules()[0].name;
  auto c = (*featuresOnly)->reset({module, std::nullopt, {}});
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_FALSE(c->moduleEmbedding);
  EXPECT_EQ(floatFeature(**featuresOnly, c->step.observation, "callee_embedding").size(),
            kDimension);
}

// A module clang cannot read fails its reset with the compiler's error (not
// the embedding's); the environment goes on serving the others.
TEST_F(Ir2VecEnvironmentTest, CorruptModuleFailsItsResetOnly) {
  std::filesystem::path corpusDir = testing::buildTestCorpus(
      scratch_.path() / "corpus-src",
      {{"good", "static int sq(int x) { return x * x; }\nint f(int a) { return sq(a) + sq(a + 1); }\n",
        {"-Oz"}},
       {"bad", "int g(int a) { return a + 1; }\n", {"-Oz"}}});
  auto bad = corpusDir / "bad.o.bc";
  testing::writeFile(bad, "BC\xc0\xde garbage, not bitcode");

  EnvironmentOptions options;
  options.problem = "inlining";
  options.clang = MLGO_CLANG;
  options.corpus = corpusDir;
  options.useDiskCache = false;
  options.ir2vecVocabulary = ir2vec::defaultVocabularyPath();
  auto env = Environment::create(options);
  ASSERT_TRUE(env.ok()) << env.error().message();
  auto failed = (*env)->reset({"bad.o", std::nullopt, {}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code(), ErrorCode::kCompiler) << failed.error().message();
  EXPECT_THAT(failed.error().message(), ::testing::HasSubstr("bad.o"));
  EXPECT_THAT(failed.error().message(), ::testing::Not(::testing::HasSubstr("embedding")));
  // Again: the embedding's failure was not kept, clang's error comes again.
  auto again = (*env)->reset({"bad.o", std::nullopt, {}});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), ErrorCode::kCompiler);
  auto good = (*env)->reset({"good.o", std::nullopt, {}});
  ASSERT_TRUE(good.ok()) << good.error().message();
  ASSERT_TRUE(good->moduleEmbedding);
  EXPECT_EQ((*env)->openEpisodes(), good->step.terminated ? 0u : 1u);
}

} // namespace
} // namespace mlgo::env
