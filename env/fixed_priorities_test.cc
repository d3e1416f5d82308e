//===- env/fixed_priorities_test.cc - the priorities file ------------------===//
#include "mlgo/env/fixed_priorities.h"

#include <gtest/gtest.h>

namespace mlgo::env {
namespace {

TEST(FixedPrioritiesTest, ReadsModulesFunctionsAndSteps) {
  auto read = FixedPriorities::parse(
      R"({"multipliers": [16, 0.0625], "modules": [
           {"module": "a.o", "best": 3.0,
            "functions": {"f": {"multipliers": {"0": 16.0, "12": 0.0625}}, "g": {}}},
           {"module": "b.o", "functions": {}}]})",
      "p.json");
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ((*read)->modules(), 2u);
  const PriorityMultipliers* a = (*read)->find("a.o");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->at("f").at(0), 16.0);
  EXPECT_EQ(a->at("f").at(12), 0.0625);
  EXPECT_TRUE(a->at("g").empty());
  EXPECT_EQ((*read)->find("c.o"), nullptr);
}

TEST(FixedPrioritiesTest, RefusesWhatItCannotApplyNamingTheEntry) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"{", "not JSON"},
      {R"({"modules": 3})", "no `modules` list"},
      {R"({"modules": [{"functions": {}}]})", "modules[0] lacks `module` or `functions`"},
      {R"({"modules": [{"module": "a.o", "functions": {}}, {"module": "a.o", "functions": {}}]})",
       "module 'a.o' is listed twice"},
      {R"({"modules": [{"module": "a.o", "functions": {"f": {"multipliers": {"x1": 2}}}}]})",
       "module 'a.o', function 'f': step 'x1' is not a question index"},
      {R"({"modules": [{"module": "a.o", "functions": {"f": {"multipliers": {"1": -2}}}}]})",
       "the multiplier of step 1 is not a finite number >= 0"},
      {R"({"modules": [{"module": "a.o", "functions": {"f": {"multipliers": {"1": "2"}}}}]})",
       "the multiplier of step 1"},
      {R"({"modules": [{"module": "a.o", "functions": {"f": {"multipliers": [2]}}}]})",
       "`multipliers` is not an object"},
      {R"({"modules": [{"module": "a.o", "functions": {"f": 3}}]})", "is not an object"},
  };
  for (const Case& c : cases) {
    auto read = FixedPriorities::parse(c.text, "p.json");
    ASSERT_FALSE(read.ok()) << c.text;
    EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_NE(read.error().message().find("priorities file p.json: "), std::string::npos)
        << read.error().message();
    EXPECT_NE(read.error().message().find(c.says), std::string::npos)
        << c.text << " -> " << read.error().message();
  }
}

TEST(FixedPrioritiesTest, AnUnreadableFileIsNamed) {
  auto read = FixedPriorities::load("/nonexistent/p.json");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("/nonexistent/p.json"), std::string::npos);
}

} // namespace
} // namespace mlgo::env
