//===- ir2vec/embedding_format_test.cc - text and JSON embeddings ----------===//
#include "mlgo/ir2vec/embedding_format.h"

#include <llvm/Support/JSON.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::ir2vec {
namespace {

using ::testing::HasSubstr;

ModuleEmbeddings sample(EmbeddingLevel level) {
  ModuleEmbeddings e;
  e.module = "m.bc";
  e.level = level;
  e.dimension = 3;
  e.records.push_back({"f\tx", 1, "bb", "%1 = add i32 %0, 1", {0.1, -1.0 / 3, 1e-20}});
  return e;
}

TEST(EmbeddingFormatTest, TextKeepsFullPrecision) {
  std::string func = formatEmbeddings(sample(EmbeddingLevel::kFunction), EmbeddingFormat::kText);
  EXPECT_EQ(func, "# module m.bc level func dimension 3\n"
                  "f\\tx\t0.1 -0.3333333333333333 1e-20\n");
  std::string inst = formatEmbeddings(sample(EmbeddingLevel::kInstruction), EmbeddingFormat::kText);
  EXPECT_THAT(inst, HasSubstr("f\\tx\t1\t%1 = add i32 %0, 1\t0.1 "));
  std::string bb = formatEmbeddings(sample(EmbeddingLevel::kBasicBlock), EmbeddingFormat::kText);
  EXPECT_THAT(bb, HasSubstr("f\\tx\t1\tbb\t0.1 "));
}

TEST(EmbeddingFormatTest, JsonRoundTripsNumbers) {
  std::string text = formatEmbeddings(sample(EmbeddingLevel::kInstruction), EmbeddingFormat::kJson);
  ASSERT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line per module";
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed));
  const llvm::json::Object& root = *parsed->getAsObject();
  EXPECT_EQ(*root.getString("level"), "inst");
  EXPECT_EQ(*root.getInteger("dimension"), 3);
  const llvm::json::Object& record = *(*root.getArray("embeddings"))[0].getAsObject();
  EXPECT_EQ(*record.getString("function"), "f\tx");
  EXPECT_EQ(*record.getInteger("block"), 1);
  EXPECT_EQ(*record.getString("instruction"), "%1 = add i32 %0, 1");
  const llvm::json::Array& vector = *record.getArray("vector");
  EXPECT_EQ(*vector[0].getAsNumber(), 0.1);
  EXPECT_EQ(*vector[1].getAsNumber(), -1.0 / 3);
  EXPECT_EQ(*vector[2].getAsNumber(), 1e-20);
  EXPECT_THAT(parseEmbeddingFormat("xml").error().message(), HasSubstr("text or json"));
}

} // namespace
} // namespace mlgo::ir2vec
