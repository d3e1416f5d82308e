//===- policy/python_repr_test.cc - JSON values as Python shows them --------===//
#include "python_repr.h"

#include <gtest/gtest.h>

#include <limits>
#include <utility>
#include <vector>

namespace mlgo::policy {
namespace {

// Each JSON text with what Python prints for repr(json.loads(text)) (objects
// with their keys sorted: python_repr.h says why).
TEST(PythonReprTest, ShowsParsedJsonAsPythonDoes) {
  std::vector<std::pair<const char*, const char*>> cases = {
      {R"(null)", R"(None)"},
      {R"(true)", R"(True)"},
      {R"(false)", R"(False)"},
      {R"("text")", R"('text')"},
      {R"("it's")", R"("it's")"},
      {R"("say \"hi\" it's")", R"('say "hi" it\'s')"},
      {R"("a\\b")", R"('a\\b')"},
      {R"("tab\there")", R"('tab\there')"},
      {R"(0)", R"(0)"},
      {R"(7)", R"(7)"},
      {R"(-7)", R"(-7)"},
      {R"(2.0)", R"(2.0)"},
      {R"(2.5)", R"(2.5)"},
      {R"(-0.0)", R"(-0.0)"},
      {R"(-0)", R"(0)"},
      {R"(1e2)", R"(100.0)"},
      {R"(1e999)", R"(inf)"},
      {R"(-1e999)", R"(-inf)"},
      {R"(1e16)", R"(1e+16)"},
      {R"(1e15)", R"(1000000000000000.0)"},
      {R"(123456789012345678)", R"(123456789012345678)"},
      {R"(1.5e300)", R"(1.5e+300)"},
      {R"(0.0001)", R"(0.0001)"},
      {R"(0.00001)", R"(1e-05)"},
      {R"(1e-7)", R"(1e-07)"},
      {R"(0.1)", R"(0.1)"},
      {R"(3.14159)", R"(3.14159)"},
      {R"(18446744073709551615)", R"(18446744073709551615)"},
      {R"([])", R"([])"},
      {R"([1, "a", null, true])", R"([1, 'a', None, True])"},
      {R"([[1], [2.5]])", R"([[1], [2.5]])"},
      {R"({})", R"({})"},
      {R"({"k": null})", R"({'k': None})"},
      {R"({"b": 1, "a": [2.0]})", R"({'a': [2.0], 'b': 1})"},
  };
  for (const auto& [json, expected] : cases) {
    auto value = llvm::json::parse(json);
    ASSERT_TRUE(static_cast<bool>(value)) << json;
    EXPECT_EQ(pythonRepr(&*value), expected) << json;
  }
  EXPECT_EQ(pythonRepr(nullptr), "None");
}

TEST(PythonReprTest, FloatsFollowPythonsLayout) {
  EXPECT_EQ(pythonFloatRepr(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(pythonFloatRepr(-2.5e-10), "-2.5e-10");
  EXPECT_EQ(pythonFloatRepr(123.456), "123.456");
  EXPECT_EQ(pythonFloatRepr(9007199254740993.0), "9007199254740992.0");
  EXPECT_EQ(pythonFloatRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(pythonFloatRepr(5e-324), "5e-324");
}

} // namespace
} // namespace mlgo::policy
