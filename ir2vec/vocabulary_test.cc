//===- ir2vec/vocabulary_test.cc - vocabulary files and the entity table ---===//
#include "mlgo/ir2vec/vocabulary.h"

#include "test_util.h"

#include "mlgo/ir2vec/entities.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::ir2vec {
namespace {

using ::testing::HasSubstr;

/// A complete vocabulary JSON where entity `id` has vector [id, id + 0.5, -id].
std::string completeJson(const std::function<std::string(size_t id)>& row = {}) {
  std::string out = "{";
  for (Section section : kAllSections) {
    if (out.size() > 1)
      out += ",";
    out += fmt::format("\"{}\":{{", sectionKey(section));
    bool first = true;
    for (size_t id = 0; id < entityCount(); ++id) {
      if (entitySection(id) != section)
        continue;
      out += first ? "" : ",";
      first = false;
      out += fmt::format("\"{}\":{}", entityNames()[id],
                         row ? row(id) : fmt::format("[{}, {}.5, {}]", id, id, -double(id)));
    }
    out += "}";
  }
  return out + "}";
}

std::string parseError(std::string_view json) {
  Result<Vocabulary> v = Vocabulary::parse(json, "v.json");
  EXPECT_FALSE(v.ok());
  if (v.ok())
    return {};
  EXPECT_EQ(v.error().code(), ErrorCode::kParse);
  return v.error().message();
}

TEST(EntitiesTest, MatchesLlvm22Layout) {
  const auto& names = entityNames();
  ASSERT_EQ(names.size(), entityCount());
  EXPECT_EQ(names.front(), "Ret");
  EXPECT_EQ(names.back(), "ICMP_sle");
  EXPECT_EQ(entitySection(0), Section::kOpcodes);
  EXPECT_EQ(entitySection(entityCount() - 1), Section::kArguments);
  ASSERT_TRUE(findEntity(Section::kTypes, "IntegerTy"));
  EXPECT_EQ(names[*findEntity(Section::kTypes, "IntegerTy")], "IntegerTy");
  EXPECT_TRUE(findEntity(Section::kOpcodes, "PtrToAddr")); // new in LLVM 22
  EXPECT_TRUE(findEntity(Section::kArguments, "Variable"));
  EXPECT_TRUE(findEntity(Section::kArguments, "FCMP_oeq"));
  EXPECT_FALSE(findEntity(Section::kOpcodes, "IntegerTy")); // wrong section
  EXPECT_FALSE(findEntity(Section::kTypes, "NoSuchTy"));
  // Sections are contiguous, in file order.
  for (size_t id = 1; id < entityCount(); ++id)
    EXPECT_LE(entitySection(id - 1), entitySection(id));
}

TEST(VocabularyTest, ParsesACompleteVocabulary) {
  Result<Vocabulary> v = Vocabulary::parse(completeJson());
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->dimension(), 3u);
  EXPECT_TRUE(v->missingEntities().empty());
  EXPECT_TRUE(v->unknownKeys().empty());
  size_t add = *findEntity(Section::kOpcodes, "Add");
  EXPECT_EQ(v->vector(add)[0], double(add));
  EXPECT_EQ(v->vector(add)[1], double(add) + 0.5);
  EXPECT_EQ(v->vector(add)[2], -double(add));
}

TEST(VocabularyTest, RoundTripsExactly) {
  std::vector<double> values(entityCount() * 4);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = std::sin(double(i)) * std::pow(10.0, double(i % 7) - 3) + (i % 5 == 0 ? 0.1 : 0);
  values[3] = -0.0;
  values[5] = 1e-300;
  Result<Vocabulary> v = Vocabulary::fromValues(4, values);
  ASSERT_TRUE(v.ok());
  Result<Vocabulary> back = Vocabulary::parse(v->toJson());
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->dimension(), 4u);
  for (size_t id = 0; id < entityCount(); ++id)
    for (size_t d = 0; d < 4; ++d)
      EXPECT_EQ(back->vector(id)[d], values[id * 4 + d]);
  EXPECT_THAT(v->toJson(), HasSubstr("\"Opcodes\": {\n    \"Ret\": ["));
}

TEST(VocabularyTest, SavesAndLoads) {
  testing::TempDir dir;
  Result<Vocabulary> v = Vocabulary::parse(completeJson());
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->save(dir / "v.json").ok());
  Result<Vocabulary> loaded = Vocabulary::load(dir / "v.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->toJson(), v->toJson());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
      << "no temporary file left behind";
}

TEST(VocabularyTest, MissingSectionIsAClearError) {
  for (std::string_view section : {"Opcodes", "Types", "Arguments"}) {
    std::string json = completeJson();
    std::string key = fmt::format("\"{}\"", section);
    json.replace(json.find(key), key.size(), "\"Other\"");
    EXPECT_THAT(parseError(json),
                HasSubstr(fmt::format("v.json: missing the '{}' section", section)));
  }
}

TEST(VocabularyTest, MixedDimensionsAreAClearError) {
  size_t add = *findEntity(Section::kOpcodes, "Add");
  std::string inSection = completeJson(
      [&](size_t id) { return id == add ? std::string("[1, 2]") : std::string("[1, 2, 3]"); });
  EXPECT_THAT(parseError(inSection),
              HasSubstr("Opcodes.Add has 2 values, but the dimension is 3 (from Opcodes."));
  std::string acrossSections = completeJson([&](size_t id) {
    return entitySection(id) == Section::kTypes ? std::string("[1, 2, 3, 4]")
                                                : std::string("[1, 2, 3]");
  });
  EXPECT_THAT(parseError(acrossSections), HasSubstr("Types."));
  EXPECT_THAT(parseError(acrossSections), HasSubstr("has 4 values, but the dimension is 3"));
}

TEST(VocabularyTest, NonNumbersAreAClearError) {
  size_t integer = *findEntity(Section::kTypes, "IntegerTy");
  auto withRow = [&](std::string row) {
    return completeJson([&](size_t id) { return id == integer ? row : "[1, 2, 3]"; });
  };
  EXPECT_THAT(parseError(withRow("[1, \"x\", 3]")),
              HasSubstr("Types.IntegerTy[1] is not a number (found a string)"));
  EXPECT_THAT(parseError(withRow("[1, 2, null]")),
              HasSubstr("Types.IntegerTy[2] is not a number (found null)"));
  EXPECT_THAT(parseError(withRow("[[1], 2, 3]")),
              HasSubstr("Types.IntegerTy[0] is not a number (found an array)"));
  EXPECT_THAT(parseError(withRow("7")),
              HasSubstr("Types.IntegerTy must be an array of numbers (found a number)"));
  EXPECT_THAT(parseError(withRow("[]")), HasSubstr("Types.IntegerTy is empty"));
  EXPECT_FALSE(Vocabulary::parse(withRow("[1, 2, 1e999]")).ok());
}

TEST(VocabularyTest, StructuralErrorsAreClear) {
  EXPECT_THAT(parseError("[1, 2]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(parseError("{\"Opcodes\": "), HasSubstr("v.json: not valid JSON"));
  EXPECT_THAT(parseError("{\"Opcodes\": [], \"Types\": {}, \"Arguments\": {}}"),
              HasSubstr("section 'Opcodes' must be an object"));
  EXPECT_THAT(parseError("{\"Opcodes\": {}, \"Types\": {}, \"Arguments\": {}}"),
              HasSubstr("section 'Opcodes' is empty"));
}

TEST(VocabularyTest, ReportsMissingAndUnknownEntries) {
  std::string json = completeJson();
  // Drop "Ret" from Opcodes, add unknown keys.
  json.replace(json.find("\"Ret\""), 5, "\"Bogus\"");
  json.replace(json.find("\"Types\":{"), 9, "\"Types\":{\"Add\":[0,0,0],");
  json.insert(json.size() - 1, ",\"Extra\":{}");
  Result<Vocabulary> v = Vocabulary::parse(json);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_THAT(v->missingEntities(), ::testing::ElementsAre("Ret"));
  EXPECT_THAT(v->unknownKeys(),
              ::testing::UnorderedElementsAre("Extra", "Opcodes.Bogus", "Types.Add"));
  EXPECT_FALSE(v->has(0));
  EXPECT_EQ(v->vector(0)[0], 0.0); // zeros, like LLVM
}

TEST(VocabularyTest, LoadAndFromValuesErrors) {
  Result<Vocabulary> missing = Vocabulary::load("/nonexistent/vocab.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("/nonexistent/vocab.json"));
  EXPECT_FALSE(Vocabulary::fromValues(0, {}).ok());
  EXPECT_FALSE(Vocabulary::fromValues(2, std::vector<double>(3)).ok());
  std::vector<double> values(entityCount(), 1.0);
  values[7] = std::nan("");
  EXPECT_FALSE(Vocabulary::fromValues(1, values).ok());
}

TEST(VocabularyTest, InlinerFlagsPassBothOptions) {
  EXPECT_THAT(inlinerVocabularyFlags("/v/x.json"),
              ::testing::ElementsAre("-mllvm", "-ml-inliner-ir2vec-vocab-file=/v/x.json", "-mllvm",
                                     "-ir2vec-vocab-path=/v/x.json"));
  EXPECT_EQ(defaultVocabularyPath().filename(), "demo-75d.json");
}

} // namespace
} // namespace mlgo::ir2vec
