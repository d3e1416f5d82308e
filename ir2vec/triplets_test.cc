//===- ir2vec/triplets_test.cc - triplet files and in-process generation ---===//
#include "mlgo/ir2vec/triplets.h"

#include "test_util.h"

#include "mlgo/ir2vec/entities.h"
#include "mlgo/ir2vec/triplet_generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace mlgo::ir2vec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TripletSet smallSet() {
  return TripletSet{{"a", "b", "c"}, {"Type", "Next"}, {{0, 1, 0}, {1, 2, 1}, {2, 2, 1}}};
}

std::string parseError(std::string_view text) {
  Result<TripletSet> set = TripletSet::parse(text, "t.txt");
  EXPECT_FALSE(set.ok());
  return set.ok() ? std::string() : set.error().message();
}

TEST(TripletsTest, RoundTripsThroughText) {
  TripletSet set = smallSet();
  std::string text = set.toText();
  EXPECT_THAT(text,
              HasSubstr("ENTITIES 3\na\nb\nc\nRELATIONS 2\nType\nNext\nTRIPLETS 3\n0\t1\t0\n"));
  Result<TripletSet> back = TripletSet::parse(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->entities, set.entities);
  EXPECT_EQ(back->relations, set.relations);
  EXPECT_EQ(back->triplets, set.triplets);
}

TEST(TripletsTest, SavesAndLoads) {
  testing::TempDir dir;
  ASSERT_TRUE(smallSet().save(dir / "t.txt").ok());
  Result<TripletSet> loaded = TripletSet::load(dir / "t.txt");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->triplets, smallSet().triplets);
  EXPECT_EQ(TripletSet::load(dir / "none.txt").error().code(), ErrorCode::kNotFound);
}

TEST(TripletsTest, ReadsLlvmIr2vecOutput) {
  Result<TripletSet> set = TripletSet::parse("MAX_RELATION=3\n30\t76\t0\n30\t82\t2\n32\t81\t3\n");
  ASSERT_TRUE(set.ok()) << set.error().message();
  EXPECT_EQ(set->entities, entityNames());
  EXPECT_THAT(set->relations, ElementsAre("Type", "Next", "Arg0", "Arg1"));
  EXPECT_THAT(set->triplets,
              ElementsAre(Triplet{30, 76, 0}, Triplet{30, 82, 2}, Triplet{32, 81, 3}));
}

TEST(TripletsTest, MalformedFilesAreClearErrors) {
  EXPECT_THAT(parseError(""), HasSubstr("t.txt: no triplets"));
  EXPECT_THAT(parseError("hello\n"), HasSubstr("t.txt:1: expected 'ENTITIES <count>'"));
  EXPECT_THAT(parseError("ENTITIES 3\na\nb\n"), HasSubstr("file ends after 2 of 3 ENTITIES"));
  EXPECT_THAT(parseError("ENTITIES 1\na\nRELATIONS 1\nType\nTRIPLETS 2\n0\t0\t0\n"),
              HasSubstr("TRIPLETS announced 2 triplets but the file has 1"));
  EXPECT_THAT(parseError("ENTITIES 1\na\nRELATIONS 1\nType\nTRIPLETS 1\n0\tx\t0\n"),
              HasSubstr("t.txt:6: expected 'head<TAB>tail<TAB>relation', found '0\tx\t0'"));
  EXPECT_THAT(parseError("ENTITIES 1\na\nRELATIONS 1\nType\nTRIPLETS 1\n0\t1\t0\n"),
              HasSubstr("names an entity id beyond the 1 entities"));
  EXPECT_THAT(parseError("ENTITIES 1\na\nRELATIONS 1\nType\nTRIPLETS 1\n0\t0\t4\n"),
              HasSubstr("names a relation id beyond the 1 relations"));
  EXPECT_THAT(parseError("MAX_RELATION=x\n"), HasSubstr("bad MAX_RELATION line"));
  EXPECT_THAT(parseError("MAX_RELATION=2\n1\t2\t3\n"), HasSubstr("relation id beyond"));
}

TEST(TripletsTest, RelationNamesFollowLlvm) {
  EXPECT_THAT(relationNames(2, false), ElementsAre("Type", "Next", "Arg0", "Arg1"));
  EXPECT_THAT(relationNames(1, true), ElementsAre("Type", "Next", "Arg0", "Predicate"));
}

TEST(TripletsTest, SplitIsSeededAndDisjoint) {
  TripletSet all{{"a"}, {"r"}, {}};
  for (uint32_t i = 0; i < 100; ++i)
    all.triplets.push_back({i, i, 0});
  auto [train, test] = splitTriplets(all, 0.2, 7);
  EXPECT_EQ(test.triplets.size(), 20u);
  EXPECT_EQ(train.triplets.size(), 80u);
  std::set<Triplet> joined(train.triplets.begin(), train.triplets.end());
  joined.insert(test.triplets.begin(), test.triplets.end());
  EXPECT_EQ(joined.size(), 100u);
  EXPECT_EQ(splitTriplets(all, 0.2, 7).second.triplets, test.triplets);
  EXPECT_NE(splitTriplets(all, 0.2, 8).second.triplets, test.triplets);
  EXPECT_TRUE(splitTriplets(all, 0, 7).second.triplets.empty());
}

// Textual IR needs no clang: LLVM parses it in-process.
constexpr std::string_view kModule = R"(
define i32 @f(i32 %a, ptr %p) {
entry:
  %x = add i32 %a, 1
  %c = icmp slt i32 %x, 10
  store i32 %x, ptr %p
  ret i32 %x
}
declare void @g()
)";

TEST(TripletGeneratorTest, ProducesLlvmTripletsForTextualIr) {
  testing::TempDir dir;
  testing::writeFile(dir / "m.ll", kModule);
  TripletOptions options;
  options.levels = {OptLevel::kO0};
  options.jobs = 1;
  Result<TripletSet> set = generateTriplets({dir / "m.ll"}, options);
  ASSERT_TRUE(set.ok()) << set.error().message();
  auto id = [](Section s, std::string_view name) { return uint32_t(*findEntity(s, name)); };
  uint32_t add = id(Section::kOpcodes, "Add"), icmp = id(Section::kOpcodes, "ICmp"),
           store = id(Section::kOpcodes, "Store"), ret = id(Section::kOpcodes, "Ret");
  uint32_t integer = id(Section::kTypes, "IntegerTy"), voidTy = id(Section::kTypes, "VoidTy");
  uint32_t variable = id(Section::kArguments, "Variable"),
           constant = id(Section::kArguments, "Constant"),
           pointer = id(Section::kArguments, "Pointer"), slt = id(Section::kArguments, "ICMP_slt");
  // Largest operand count is 2, so Predicate is relation 4.
  EXPECT_THAT(set->relations, ElementsAre("Type", "Next", "Arg0", "Arg1", "Predicate"));
  std::vector<Triplet> expected = {{add, integer, 0},   {add, variable, 2},   {add, constant, 3},
                                   {add, icmp, 1},      {icmp, integer, 0},   {icmp, variable, 2},
                                   {icmp, constant, 3}, {icmp, slt, 4},       {icmp, store, 1},
                                   {store, voidTy, 0},  {store, variable, 2}, {store, pointer, 3},
                                   {store, ret, 1},     {ret, voidTy, 0},     {ret, variable, 2}};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(set->triplets, expected);

  options.includePredicates = false;
  Result<TripletSet> plain = generateTriplets({dir / "m.ll"}, options);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->triplets.size(), expected.size() - 1);
  EXPECT_THAT(plain->relations, ElementsAre("Type", "Next", "Arg0", "Arg1"));
}

TEST(TripletGeneratorTest, OptimisedLevelsAddAndDuplicatesMerge) {
  testing::TempDir dir;
  testing::writeFile(dir / "m.ll", kModule);
  testing::writeFile(dir / "copy.ll", kModule);
  TripletOptions options;
  options.levels = {OptLevel::kO0};
  Result<TripletSet> once = generateTriplets({dir / "m.ll"}, options);
  Result<TripletSet> copies = generateTriplets({dir / "m.ll", dir / "copy.ll"}, options);
  options.levels = {OptLevel::kO0, OptLevel::kO2};
  Result<TripletSet> levels = generateTriplets({dir / "m.ll"}, options);
  ASSERT_TRUE(once.ok() && copies.ok() && levels.ok());
  EXPECT_EQ(copies->triplets, once->triplets);
  // O2 deletes the unused compare, so the add is followed by the store.
  uint32_t add = uint32_t(*findEntity(Section::kOpcodes, "Add"));
  uint32_t store = uint32_t(*findEntity(Section::kOpcodes, "Store"));
  Triplet addThenStore{add, store, kNextRelation};
  EXPECT_FALSE(std::binary_search(once->triplets.begin(), once->triplets.end(), addThenStore));
  EXPECT_TRUE(std::binary_search(levels->triplets.begin(), levels->triplets.end(), addThenStore));
  EXPECT_TRUE(std::includes(levels->triplets.begin(), levels->triplets.end(),
                            once->triplets.begin(), once->triplets.end()));
}

TEST(TripletGeneratorTest, BadInputsAreClearErrors) {
  testing::TempDir dir;
  testing::writeFile(dir / "bad.ll", "this is not IR");
  TripletOptions options;
  Result<TripletSet> bad = generateTriplets({dir / "bad.ll"}, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kParse);
  EXPECT_THAT(bad.error().message(), HasSubstr("bad.ll: not a valid LLVM IR module"));
  Result<TripletSet> missing = generateTriplets({dir / "none.bc"}, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(generateTriplets({}, options).ok());
}

TEST(TripletGeneratorTest, ParsesOptimisationLevels) {
  Result<std::vector<OptLevel>> levels = parseOptLevels("O0,-O2,Oz,O2");
  ASSERT_TRUE(levels.ok());
  EXPECT_THAT(*levels, ElementsAre(OptLevel::kO0, OptLevel::kO2, OptLevel::kOz));
  EXPECT_THAT(parseOptLevels("O4").error().message(), HasSubstr("unknown optimisation level 'O4'"));
  EXPECT_FALSE(parseOptLevels("").ok());
}

} // namespace
} // namespace mlgo::ir2vec
