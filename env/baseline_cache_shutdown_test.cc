//===- env/baseline_cache_shutdown_test.cc - no store after the cleanup ---===//
//
// A cache entry is written through a temporary registered in the cache's
// cleanup scope (support/cleanup_scope.h). Scopes are owned values, so the
// test cleans one up in this very process (no death test) and checks that
// a cache of another scope keeps working.
//
//===----------------------------------------------------------------------===//
#include "mlgo/env/baseline_cache.h"
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(BaselineCacheShutdownTest, StoresStopAtTheCleanupOfTheirScopeOnly) {
  support::CleanupScope testScope; // Holds the test's directory.
  auto dir = support::TempDir::create(testScope, "mlgo-env-cache-shutdown-test-");
  ASSERT_TRUE(dir.ok()) << dir.error().message();
  support::CleanupScope interrupted, running;
  auto stopped = BaselineCache::open(interrupted, dir->path() / "a");
  auto going = BaselineCache::open(running, dir->path() / "b");
  ASSERT_TRUE(stopped.ok() && going.ok());
  ASSERT_TRUE(stopped->store("before", ModuleScore{1.0, {}}).ok());

  interrupted.cleanup();
  Status late = stopped->store("after", ModuleScore{2.0, {}});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code(), ErrorCode::kIo);
  // Refused before anything was made: no temporary is left behind.
  EXPECT_EQ(entries(dir->path() / "a"), std::vector<std::string>{"before.json"});
  EXPECT_EQ(interrupted.registeredPaths(), 0u);

  ASSERT_TRUE(going->store("after", ModuleScore{2.0, {}}).ok());
  EXPECT_EQ(entries(dir->path() / "b"), std::vector<std::string>{"after.json"});
  ASSERT_TRUE(going->load("after").has_value());
  EXPECT_EQ(going->load("after")->total, 2.0);
  EXPECT_EQ(running.registeredPaths(), 0u);
}

} // namespace
} // namespace mlgo::env
