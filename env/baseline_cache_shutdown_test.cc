//===- env/baseline_cache_shutdown_test.cc - no store after the cleanup ---===//
//
// emergencyCleanup() (support/shutdown.h) closes the process-wide registries
// for good, so the test runs it in a death-test child (a forked copy) that
// ends with _exit, and the parent then looks at what is left in the cache.
//
//===----------------------------------------------------------------------===//
#include "mlgo/env/baseline_cache.h"
#include "mlgo/support/shutdown.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;

// A cache entry is written through a registered temporary: after the
// cleanup, store() is refused and leaves no temporary in the cache.
TEST(BaselineCacheShutdownTest, CacheStoresAreRefusedAfterTheCleanup) {
  // The "fast" death-test style forks this process without exec, so the
  // child works in the directory the parent then inspects. It is made
  // without TempDir: a registered path would be removed by the child's
  // cleanup along with everything else.
  GTEST_FLAG_SET(death_test_style, "fast");
  std::string pattern =
      (support::TempDir::systemTempDir() / "mlgo-env-cache-shutdown-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  fs::path dir = pattern;
  fs::path cacheDir = dir / "cache";
  fs::create_directories(cacheDir);
  EXPECT_EXIT(
      {
        auto cache = BaselineCache::open(cacheDir);
        if (!cache.ok() || !cache->store("before", ModuleScore{1.0, {}}).ok())
          _exit(2);
        support::shutdown::emergencyCleanup();
        Status late = cache->store("after", ModuleScore{2.0, {}});
        if (late.ok() || late.error().code() != ErrorCode::kIo)
          _exit(3);
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(cacheDir))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"before.json"});
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

} // namespace
} // namespace mlgo::env
