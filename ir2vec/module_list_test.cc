//===- ir2vec/module_list_test.cc - resolving module inputs ----------------===//
#include "mlgo/ir2vec/module_list.h"

#include "test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mlgo::ir2vec {
namespace {

using ::testing::ElementsAre;

TEST(ModuleListTest, ExpandsDirectoriesAndKeepsFiles) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  for (const char* name : {"b.bc", "a.bc", "sub/c.bc", "a.thinlto.bc", "notes.txt", "m.ll"})
    testing::writeFile(dir / name, "x");
  Result<std::vector<std::filesystem::path>> modules = resolveModules({dir.path(), dir / "m.ll"});
  ASSERT_TRUE(modules.ok()) << modules.error().message();
  EXPECT_THAT(*modules, ElementsAre(dir / "a.bc", dir / "b.bc", dir / "sub/c.bc", dir / "m.ll"));
}

TEST(ModuleListTest, ErrorsNameTheInput) {
  testing::TempDir dir;
  Result<std::vector<std::filesystem::path>> missing = resolveModules({dir / "none.bc"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), ::testing::HasSubstr("none.bc"));
  Result<std::vector<std::filesystem::path>> empty = resolveModules({dir.path()});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kInvalidArgument);
}

} // namespace
} // namespace mlgo::ir2vec
