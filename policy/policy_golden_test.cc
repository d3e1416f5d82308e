//===- policy/policy_golden_test.cc - the golden policy files ---------------===//
///
/// Holds the C++ reader and runner to tests/data/policies/manifest.json, as
/// python/tests/test_policy_golden.py holds the Python ones: every valid file
/// loads, binds to its layout and takes the listed action (logits to 1e-12)
/// on each listed observation; every invalid file is refused with the listed
/// message, at load (kParse) or at bind (kInvalidArgument). The observations
/// carry `info.default_action` for the Python runner (which takes
/// host-emulation-v2 from it); here the emulation computes it, and the test
/// checks both agree.
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/policy_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mlgo::policy {
namespace {

using protocol::ElementType;
using protocol::TensorSpec;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::filesystem::path kGolden =
    std::filesystem::path(MLGO_SOURCE_DIR) / "tests" / "data" / "policies";

/// manifest.json, parsed once; a test fails (not crashes) when it cannot be.
const llvm::json::Object& manifest() {
  static const llvm::json::Object parsed = [] {
    auto buffer = llvm::MemoryBuffer::getFile((kGolden / "manifest.json").string());
    if (!buffer)
      return llvm::json::Object{};
    auto value = llvm::json::parse((*buffer)->getBuffer());
    if (!value) {
      llvm::consumeError(value.takeError());
      return llvm::json::Object{};
    }
    return value->getAsObject() ? std::move(*value->getAsObject()) : llvm::json::Object{};
  }();
  return parsed;
}

const llvm::json::Array& entries(const char* key) {
  static const llvm::json::Array empty;
  const llvm::json::Array* list = manifest().getArray(key);
  return list != nullptr ? *list : empty;
}

std::vector<TensorSpec> layout(llvm::StringRef name) {
  std::vector<TensorSpec> specs;
  const llvm::json::Object* layouts = manifest().getObject("layouts");
  const llvm::json::Array* list = layouts != nullptr ? layouts->getArray(name) : nullptr;
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    std::string text;
    llvm::raw_string_ostream out(text);
    out << (*list)[i];
    auto spec = TensorSpec::fromJson(out.str());
    EXPECT_TRUE(spec.ok()) << text;
    if (spec.ok())
      specs.push_back(std::move(*spec));
  }
  return specs;
}

/// One element written as `type` (the manifest's values are exact in every type used).
void store(ElementType type, double value, std::byte* at) {
  auto put = [&](auto typed) { std::memcpy(at, &typed, sizeof(typed)); };
  switch (type) {
  case ElementType::kFloat:
    return put(static_cast<float>(value));
  case ElementType::kDouble:
    return put(value);
  case ElementType::kInt32:
    return put(static_cast<int32_t>(value));
  case ElementType::kInt64:
    return put(static_cast<int64_t>(value));
  default:
    FAIL() << "the manifest uses float, double, int32_t and int64_t only";
  }
}

/// An observation of the manifest as tensors of its layout.
struct Observation {
  std::vector<std::vector<std::byte>> bytes;
  std::optional<int64_t> defaultAction;

  std::vector<std::span<const std::byte>> views() const { return {bytes.begin(), bytes.end()}; }
};

Observation observation(const std::vector<TensorSpec>& specs, const llvm::json::Object& entry) {
  Observation obs;
  const llvm::json::Object* features = entry.getObject("features");
  for (const TensorSpec& spec : specs) {
    obs.bytes.emplace_back(spec.byteSize());
    const llvm::json::Array* values =
        features != nullptr ? features->getArray(spec.name()) : nullptr;
    EXPECT_TRUE(values != nullptr && values->size() == spec.elementCount()) << spec.name();
    for (size_t i = 0; values != nullptr && i < values->size() && i < spec.elementCount(); ++i)
      store(spec.type(), (*values)[i].getAsNumber().value_or(NAN),
            obs.bytes.back().data() + i * protocol::elementSize(spec.type()));
  }
  if (const llvm::json::Object* info = entry.getObject("info"))
    obs.defaultAction = info->getInteger("default_action");
  return obs;
}

std::string fileOf(const llvm::json::Value& entry) {
  const llvm::json::Object* obj = entry.getAsObject();
  auto file = obj != nullptr ? obj->getString("file") : std::nullopt;
  return file ? file->str() : "";
}

TEST(PolicyGoldenTest, TheManifestListsFiles) {
  EXPECT_GE(entries("valid").size(), 9u);
  EXPECT_GE(entries("invalid").size(), 50u);
}

class ValidPolicyTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ValidPolicyTest, TakesTheListedActions) {
  const llvm::json::Object& c = *entries("valid")[GetParam()].getAsObject();
  std::filesystem::path path = kGolden / fileOf(entries("valid")[GetParam()]);
  auto policy = Policy::load(path);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  llvm::StringRef layoutName = c.getString("layout").value_or("");
  EXPECT_EQ(policy->problem(), layoutName.str());
  std::vector<TensorSpec> specs = layout(layoutName);
  auto bound = policy->bind(specs);
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  auto emulation = DefaultEvictionPolicy::create(specs);

  const llvm::json::Array& observations =
      *manifest().getObject("observations")->getArray(layoutName);
  const llvm::json::Array& actions = *c.getArray("actions");
  const llvm::json::Array& logits = *c.getArray("logits");
  ASSERT_EQ(actions.size(), observations.size());
  ASSERT_EQ(logits.size(), observations.size());
  for (size_t k = 0; k < observations.size(); ++k) {
    SCOPED_TRACE("observation " + std::to_string(k));
    Observation obs = observation(specs, *observations[k].getAsObject());
    std::vector<double> got;
    EXPECT_EQ(bound->decide(obs.views(), got), *actions[k].getAsInteger());
    const llvm::json::Array& want = *logits[k].getAsArray();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      double expected = *want[i].getAsNumber();
      EXPECT_NEAR(got[i], expected, 1e-12 * std::max(1.0, std::fabs(expected))) << "row " << i;
    }
    // What the Python runner reads from info is what this host's emulation computes.
    if (obs.defaultAction && emulation.ok()) {
      EXPECT_EQ(emulation->choose(obs.views()), *obs.defaultAction);
    }
  }
}

class InvalidPolicyTest : public ::testing::TestWithParam<size_t> {};

TEST_P(InvalidPolicyTest, IsRefusedWithTheListedMessage) {
  const llvm::json::Object& c = *entries("invalid")[GetParam()].getAsObject();
  std::filesystem::path path = kGolden / fileOf(entries("invalid")[GetParam()]);
  std::string expected = c.getString("error").value_or("").str();
  std::string where = "policy '" + path.string() + "'";
  auto policy = Policy::load(path);
  if (c.getString("refused_at") == "load") {
    ASSERT_FALSE(policy.ok()) << "accepted";
    EXPECT_EQ(policy.error().code(), ErrorCode::kParse);
    EXPECT_THAT(policy.error().message(), StartsWith(where));
    EXPECT_THAT(policy.error().message(), HasSubstr(expected));
    return;
  }
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  auto bound = policy->bind(layout(c.getString("layout").value_or("")));
  ASSERT_FALSE(bound.ok()) << "bound";
  EXPECT_EQ(bound.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bound.error().message(), StartsWith(where + ": "));
  EXPECT_THAT(bound.error().message(), HasSubstr(expected));
}

/// Test names from file names: "invalid/version-4.json" -> "version_4".
template <const char* Key> std::string nameOf(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = std::filesystem::path(fileOf(entries(Key)[info.param])).stem().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name.empty() ? "unnamed_" + std::to_string(info.param) : name;
}

constexpr char kValid[] = "valid";
constexpr char kInvalid[] = "invalid";
INSTANTIATE_TEST_SUITE_P(Golden, ValidPolicyTest,
                         ::testing::Range<size_t>(0, entries(kValid).size()), nameOf<kValid>);
INSTANTIATE_TEST_SUITE_P(Golden, InvalidPolicyTest,
                         ::testing::Range<size_t>(0, entries(kInvalid).size()), nameOf<kInvalid>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ValidPolicyTest);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(InvalidPolicyTest);

} // namespace
} // namespace mlgo::policy
