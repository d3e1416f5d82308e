//===- ir2vec/embedder_test.cc - embeddings through LLVM's IR2Vec ----------===//
#include "mlgo/ir2vec/embedder.h"

#include "test_util.h"

#include "mlgo/ir2vec/entities.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace mlgo::ir2vec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// Matches a 2-vector up to float rounding (LLVM's weights are floats:
/// 0.2f is not exactly 0.2).
::testing::Matcher<const std::vector<double>&> Near(double x, double y) {
  return ElementsAre(::testing::DoubleNear(x, 1e-5), ::testing::DoubleNear(y, 1e-5));
}

/// Two-dimensional vocabulary: zeros except the listed entities (unscaled;
/// LLVM's default weights are 1 for opcodes, 0.5 for types, 0.2 for the rest).
Vocabulary handMadeVocabulary() {
  std::map<std::pair<Section, std::string>, std::pair<double, double>> rows = {
      {{Section::kOpcodes, "Add"}, {1, 0}},         {{Section::kOpcodes, "Ret"}, {10, 0}},
      {{Section::kOpcodes, "ICmp"}, {100, 0}},      {{Section::kOpcodes, "Call"}, {0, 1}},
      {{Section::kTypes, "IntegerTy"}, {0, 2}},     {{Section::kTypes, "VoidTy"}, {0, 4}},
      {{Section::kArguments, "Variable"}, {5, 0}},  {{Section::kArguments, "Constant"}, {0, 5}},
      {{Section::kArguments, "Function"}, {0, 50}}, {{Section::kArguments, "ICMP_slt"}, {50, 0}},
  };
  std::vector<double> values(entityCount() * 2, 0.0);
  for (const auto& [key, row] : rows) {
    size_t id = *findEntity(key.first, key.second);
    values[id * 2] = row.first;
    values[id * 2 + 1] = row.second;
  }
  return *Vocabulary::fromValues(2, values);
}

// Scaled vectors: Add [1,0], Ret [10,0], ICmp [100,0], Call [0,1],
// IntegerTy [0,1], VoidTy [0,2], Variable [1,0], Constant [0,1],
// Function [0,10], ICMP_slt [10,0]. Labels count as Variable operands.
constexpr std::string_view kModule = R"(
define i32 @f(i32 %a) {
entry:
  %x = add i32 %a, 1
  %c = icmp slt i32 %x, 10
  br label %next
next:
  ret i32 %x
dead:
  ret i32 0
}
define void @g() {
  call void @h()
  ret void
}
declare void @h()
)";

class EmbedderTest : public ::testing::Test {
protected:
  void SetUp() override { testing::writeFile(dir_ / "m.ll", kModule); }
  std::filesystem::path module() const { return dir_ / "m.ll"; }
  testing::TempDir dir_;
};

TEST_F(EmbedderTest, FunctionVectorsSumReachableBlocks) {
  Result<Embedder> embedder = Embedder::create(handMadeVocabulary());
  ASSERT_TRUE(embedder.ok());
  Result<ModuleEmbeddings> e = embedder->embed(module(), EmbeddingLevel::kFunction);
  ASSERT_TRUE(e.ok()) << e.error().message();
  ASSERT_EQ(e->records.size(), 2u); // declarations are skipped
  EXPECT_EQ(e->records[0].function, "f");
  // entry: add [2,2] + icmp [111,2] + br [1,2]; next: ret [11,2]; dead is unreachable.
  EXPECT_THAT(e->records[0].vector, Near(125, 8));
  EXPECT_EQ(e->records[1].function, "g");
  EXPECT_THAT(e->records[1].vector, Near(10, 15)); // call [0,13] + ret [10,2]
  Result<std::vector<double>> total = embedder->moduleVector(module());
  ASSERT_TRUE(total.ok());
  EXPECT_THAT(*total, Near(135, 23));
  Result<std::vector<double>> oneShot = moduleEmbedding(module(), handMadeVocabulary());
  ASSERT_TRUE(oneShot.ok());
  EXPECT_EQ(*oneShot, *total);
}

TEST_F(EmbedderTest, BlockAndInstructionLevels) {
  Result<Embedder> embedder = Embedder::create(handMadeVocabulary());
  ASSERT_TRUE(embedder.ok());
  Result<ModuleEmbeddings> bb = embedder->embed(module(), EmbeddingLevel::kBasicBlock, "f");
  ASSERT_TRUE(bb.ok());
  ASSERT_EQ(bb->records.size(), 3u);
  EXPECT_EQ(bb->records[2].blockName, "dead");
  EXPECT_EQ(bb->records[2].block, 2u);
  EXPECT_THAT(bb->records[0].vector, Near(114, 6));
  EXPECT_THAT(bb->records[2].vector, Near(10, 3));
  Result<ModuleEmbeddings> inst = embedder->embed(module(), EmbeddingLevel::kInstruction, "f");
  ASSERT_TRUE(inst.ok());
  ASSERT_EQ(inst->records.size(), 5u);
  EXPECT_EQ(inst->records[1].instruction, "%c = icmp slt i32 %x, 10");
  EXPECT_THAT(inst->records[1].vector, Near(111, 2));
}

TEST_F(EmbedderTest, FlowAwareUsesDefiningInstructions) {
  Result<Embedder> embedder = Embedder::create(handMadeVocabulary(), EmbeddingKind::kFlowAware);
  ASSERT_TRUE(embedder.ok());
  Result<ModuleEmbeddings> inst = embedder->embed(module(), EmbeddingLevel::kInstruction, "f");
  ASSERT_TRUE(inst.ok());
  // icmp's %x operand is add's vector [2,2] instead of Variable [1,0].
  EXPECT_THAT(inst->records[1].vector, Near(112, 4));
}

TEST_F(EmbedderTest, WeightsScaleSections) {
  EmbeddingWeights weights;
  weights.opcode = 0;
  weights.type = 1;
  weights.argument = 0;
  Result<Embedder> embedder =
      Embedder::create(handMadeVocabulary(), EmbeddingKind::kSymbolic, weights);
  ASSERT_TRUE(embedder.ok());
  Result<ModuleEmbeddings> e = embedder->embed(module(), EmbeddingLevel::kFunction, "g");
  ASSERT_TRUE(e.ok());
  EXPECT_THAT(e->records[0].vector, Near(0, 8)); // two VoidTy [0,4]
  weights.type = -1;
  EXPECT_FALSE(Embedder::create(handMadeVocabulary(), EmbeddingKind::kSymbolic, weights).ok());
}

TEST_F(EmbedderTest, EmbedsManyModulesInInputOrder) {
  testing::writeFile(dir_ / "g.ll", "define void @only() {\n  ret void\n}\n");
  Result<Embedder> embedder = Embedder::create(handMadeVocabulary());
  ASSERT_TRUE(embedder.ok());
  std::vector<std::filesystem::path> modules = {module(), dir_ / "g.ll", module()};
  Result<std::vector<ModuleEmbeddings>> all =
      embedder->embedAll(modules, EmbeddingLevel::kFunction, {}, 2);
  ASSERT_TRUE(all.ok()) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].records.at(0).function, "only");
  EXPECT_EQ((*all)[0].records.size(), 2u);
  EXPECT_EQ((*all)[2].records.at(1).vector, (*all)[0].records.at(1).vector);
  modules.push_back(dir_ / "missing.bc");
  Result<std::vector<ModuleEmbeddings>> failed =
      embedder->embedAll(modules, EmbeddingLevel::kFunction, {}, 2);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.error().message(), HasSubstr("missing.bc"));
}

TEST_F(EmbedderTest, ErrorsNameTheProblem) {
  Result<Embedder> embedder = Embedder::create(handMadeVocabulary());
  ASSERT_TRUE(embedder.ok());
  Result<ModuleEmbeddings> none = embedder->embed(module(), EmbeddingLevel::kFunction, "h");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(none.error().message(), HasSubstr("no definition of function 'h'"));
  EXPECT_EQ(embedder->embed(dir_ / "x.bc", EmbeddingLevel::kFunction).error().code(),
            ErrorCode::kNotFound);
  testing::writeFile(dir_ / "bad.bc", "BC\xc0\xde garbage");
  EXPECT_EQ(embedder->moduleVector(dir_ / "bad.bc").error().code(), ErrorCode::kParse);
  EXPECT_THAT(parseEmbeddingLevel("module").error().message(), HasSubstr("func, bb or inst"));
  EXPECT_EQ(*parseEmbeddingKind("flow-aware"), EmbeddingKind::kFlowAware);
}

} // namespace
} // namespace mlgo::ir2vec
