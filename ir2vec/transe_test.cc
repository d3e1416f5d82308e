//===- ir2vec/transe_test.cc - TransE training and link prediction ---------===//
#include "mlgo/ir2vec/transe.h"

#include "mlgo/ir2vec/entities.h"
#include "mlgo/ir2vec/link_prediction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace mlgo::ir2vec {
namespace {

using ::testing::HasSubstr;

/// A planted structure TransE can represent: 36 "head" entities in 6
/// classes of 6, and for each relation r and class c a pair of "tail"
/// entities T(r, c); every head of class c is linked by r to both members of
/// T(r, c). A held-out triplet is predictable from its class mates.
TripletSet plantedGraph() {
  constexpr uint32_t kClasses = 6, kClassSize = 6, kRelations = 3, kTailsPerClass = 2;
  constexpr uint32_t kHeads = kClasses * kClassSize;
  TripletSet set;
  for (uint32_t e = 0; e < kHeads + kRelations * kClasses * kTailsPerClass; ++e)
    set.entities.push_back(fmt::format("e{}", e));
  for (uint32_t r = 0; r < kRelations; ++r)
    set.relations.push_back(fmt::format("r{}", r));
  for (uint32_t r = 0; r < kRelations; ++r)
    for (uint32_t c = 0; c < kClasses; ++c)
      for (uint32_t i = 0; i < kClassSize; ++i)
        for (uint32_t k = 0; k < kTailsPerClass; ++k)
          set.triplets.push_back(
              {c * kClassSize + i, kHeads + (r * kClasses + c) * kTailsPerClass + k, r});
  return set;
}

TransEConfig smallConfig() {
  TransEConfig config;
  config.dimension = 16;
  config.epochs = 60;
  config.batchesPerEpoch = 10;
  config.margin = 2.0;
  config.learningRate = 0.01;
  config.seed = 5;
  config.threads = 1;
  return config;
}

TEST(TransETest, LearnsHeldOutTripletsFarBetterThanRandom) {
  TripletSet all = plantedGraph();
  auto [train, test] = splitTriplets(all, 0.1, 3);
  TransEConfig config = smallConfig();
  Result<TransEModel> trained = trainTransE(train, config);
  config.trainEntities = false;
  Result<TransEModel> random = trainTransE(train, config);
  ASSERT_TRUE(trained.ok() && random.ok());
  LinkPredictionMetrics good = evaluateLinkPrediction(*trained, test.triplets, all.triplets);
  LinkPredictionMetrics bad = evaluateLinkPrediction(*random, test.triplets, all.triplets);
  std::printf("trained: hits@10 %.3f mean rank %.2f; random: hits@10 %.3f mean rank %.2f\n",
              good.hitsAt10, good.meanRank, bad.hitsAt10, bad.meanRank);
  EXPECT_EQ(good.queries, 2 * test.triplets.size());
  // 72 entities: a random ranking puts the truth near rank 35; the planted
  // structure allows rank 1 (the truth's class mates are filtered).
  EXPECT_GT(good.hitsAt10, 0.95);
  EXPECT_LT(good.meanRank, 2.0);
  EXPECT_GT(good.hitsAt10, bad.hitsAt10 + 0.3);
  EXPECT_LT(2 * good.meanRank, bad.meanRank);
}

TEST(TransETest, ReportsDecreasingLossPerEpoch) {
  TransEConfig config = smallConfig();
  std::vector<EpochReport> reports;
  config.onEpoch = [&](const EpochReport& r) { reports.push_back(r); };
  ASSERT_TRUE(trainTransE(plantedGraph(), config).ok());
  ASSERT_EQ(reports.size(), config.epochs);
  EXPECT_EQ(reports.front().epoch, 1u);
  EXPECT_EQ(reports.back().epoch, config.epochs);
  EXPECT_EQ(reports.back().epochs, config.epochs);
  EXPECT_LT(reports.back().loss, 0.2 * reports.front().loss);
  EXPECT_LT(reports.back().violatingFraction, reports.front().violatingFraction);
}

TEST(TransETest, SeededAndIndependentOfThreadCount) {
  TransEConfig config = smallConfig();
  config.epochs = 10;
  Result<TransEModel> one = trainTransE(plantedGraph(), config);
  config.threads = 3;
  Result<TransEModel> three = trainTransE(plantedGraph(), config);
  config.seed = 6;
  Result<TransEModel> otherSeed = trainTransE(plantedGraph(), config);
  ASSERT_TRUE(one.ok() && three.ok() && otherSeed.ok());
  EXPECT_EQ(one->entities, three->entities); // bit-identical
  EXPECT_EQ(one->relations, three->relations);
  EXPECT_NE(one->entities, otherSeed->entities);
}

TEST(TransETest, EntityVectorsAreNormalised) {
  Result<TransEModel> model = trainTransE(plantedGraph(), smallConfig());
  ASSERT_TRUE(model.ok());
  for (size_t e = 0; e < model->entityCount; ++e) {
    double norm = 0;
    for (float x : model->entity(e))
      norm += double(x) * x;
    EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-5);
  }
}

TEST(TransETest, RejectsBadConfigurations) {
  TripletSet data = plantedGraph();
  auto error = [&](TransEConfig c, const TripletSet& d) {
    Result<TransEModel> m = trainTransE(d, c);
    return m.ok() ? std::string() : m.error().message();
  };
  TransEConfig c = smallConfig();
  c.dimension = 0;
  EXPECT_THAT(error(c, data), HasSubstr("dimension"));
  c = smallConfig();
  c.epochs = 0;
  EXPECT_THAT(error(c, data), HasSubstr("epochs"));
  c = smallConfig();
  c.margin = 0;
  EXPECT_THAT(error(c, data), HasSubstr("margin"));
  c = smallConfig();
  c.learningRate = -1;
  EXPECT_THAT(error(c, data), HasSubstr("learning rate"));
  TripletSet empty{data.entities, data.relations, {}};
  EXPECT_THAT(error(smallConfig(), empty), HasSubstr("no triplets"));
  TripletSet outOfRange{data.entities, data.relations, {{0, 99, 0}}};
  EXPECT_THAT(error(smallConfig(), outOfRange), HasSubstr("beyond"));
}

TEST(TransETest, WritesVocabulariesOnlyForLlvmEntities) {
  Result<TransEModel> planted = trainTransE(plantedGraph(), smallConfig());
  ASSERT_TRUE(planted.ok());
  Result<Vocabulary> refused = planted->toVocabulary(plantedGraph().entities);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message(), HasSubstr("not LLVM 22's IR2Vec entities"));

  TransEModel model = randomTransEModel(entityCount(), 2, 4, 1);
  model.entities[0] = 0.1f;
  Result<Vocabulary> vocabulary = model.toVocabulary(entityNames());
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.error().message();
  EXPECT_EQ(vocabulary->dimension(), 4u);
  EXPECT_EQ(vocabulary->vector(0)[0], 0.1); // the float's short form, not 0.100000001...
  EXPECT_EQ(float(vocabulary->vector(3)[2]), model.entities[3 * 4 + 2]);
}

TEST(LinkPredictionTest, ComputesFilteredRanks) {
  // One dimension: entities at 0, 1, 2, 3; the relation adds 1.
  TransEModel model;
  model.dimension = 1;
  model.entityCount = 4;
  model.relationCount = 1;
  model.entities = {0, 1, 2, 3};
  model.relations = {1};
  std::vector<Triplet> test = {{0, 1, 0}, {0, 3, 0}};
  LinkPredictionMetrics m = evaluateLinkPrediction(model, test, test);
  // (0,1): tail rank 1, head rank 1. (0,3): tail distance 2, beaten by
  // entities 0 and 2 (entity 1 is filtered: (0,1) is known) -> 3; head:
  // |e + 1 - 3| < 2 for e = 1, 2, 3 -> 4.
  EXPECT_EQ(m.queries, 4u);
  EXPECT_DOUBLE_EQ(m.meanRank, (1 + 1 + 3 + 4) / 4.0);
  EXPECT_DOUBLE_EQ(m.hitsAt10, 1.0);
  EXPECT_DOUBLE_EQ(m.meanReciprocalRank, (1 + 1 + 1 / 3.0 + 1 / 4.0) / 4);
  LinkPredictionMetrics unfiltered = evaluateLinkPrediction(model, {{0, 3, 0}}, {});
  EXPECT_DOUBLE_EQ(unfiltered.meanRank, (4 + 4) / 2.0);
}

} // namespace
} // namespace mlgo::ir2vec
