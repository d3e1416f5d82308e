//===- env/optimized_ir_cache_test.cc - optimised IR on disk ---------------===//
//
// The optimised-IR cache keeps an entry only while its bitcode matches its
// record: truncated, altered or unrecorded files are misses, never used.
//
#include "mlgo/env/optimized_ir_cache.h"

#include "mlgo/env/baseline_cache.h"
#include "mlgo/support/temp_dir.h"
#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace mlgo::env {
namespace {

using ::testing::HasSubstr;

class OptimizedIrCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-optir-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    built_ = dir_.path() / "built.bc";
    testing::writeFile(built_, contents_);
    auto cache = OptimizedIrCache::open(scope_, dir_.path() / "cache" / "optimized-ir");
    ASSERT_TRUE(cache.ok()) << cache.error().message();
    cache_.emplace(std::move(*cache));
  }
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
  std::filesystem::path built_;
  std::string contents_ = std::string("BC\xc0\xde", 4) + std::string(5000, 'x');
  std::optional<OptimizedIrCache> cache_;
};

TEST_F(OptimizedIrCacheTest, StoresACopyAndLoadsItBack) {
  EXPECT_EQ(cache_->load("k").error().code(), ErrorCode::kNotFound);
  auto stored = cache_->store("k", built_, "dir/m.o");
  ASSERT_TRUE(stored.ok()) << stored.error().message();
  EXPECT_EQ(stored->bitcode, cache_->bitcodePath("k"));
  EXPECT_EQ(testing::readFile(stored->bitcode), contents_);
  EXPECT_TRUE(std::filesystem::exists(built_)); // A copy, not a move.
  auto loaded = cache_->load("k");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->digest, stored->digest);
  EXPECT_EQ(loaded->inode, stored->inode);
  EXPECT_EQ(loaded->size, contents_.size());
  EXPECT_TRUE(OptimizedIrCache::unchanged(*loaded));
  EXPECT_THAT(testing::readFile(cache_->dir() / "k.json"), HasSubstr("\"module\":\"dir/m.o\""));
}

TEST_F(OptimizedIrCacheTest, KeyDependsOnEveryPart) {
  std::vector<std::string> args = {"-cc1", "-O2"};
  std::string key = optimizedIrKey("d", args, "v");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, optimizedIrKey("d", args, "v"));
  EXPECT_NE(key, optimizedIrKey("e", args, "v"));
  EXPECT_NE(key, optimizedIrKey("d", args, "w"));
  EXPECT_NE(key, optimizedIrKey("d", std::vector<std::string>{"-cc1", "-O3"}, "v"));
  EXPECT_NE(key, baselineKey("d", args, "v")); // Its own tag.
}

TEST_F(OptimizedIrCacheTest, AlteredOrTruncatedBitcodeIsNotTrusted) {
  ASSERT_TRUE(cache_->store("k", built_, "m").ok());
  std::filesystem::path bitcode = cache_->bitcodePath("k");
  std::string altered = contents_;
  altered[100] = 'y'; // Same size, other bytes.
  testing::writeFile(bitcode, altered);
  auto loaded = cache_->load("k");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), ErrorCode::kParse);
  EXPECT_THAT(loaded.error().message(), HasSubstr("its record says"));
  testing::writeFile(bitcode, contents_.substr(0, 100));
  EXPECT_EQ(cache_->load("k").error().code(), ErrorCode::kParse);
  std::filesystem::remove(bitcode);
  EXPECT_EQ(cache_->load("k").error().code(), ErrorCode::kParse); // A record without its file.
  // Storing again repairs it.
  ASSERT_TRUE(cache_->store("k", built_, "m").ok());
  EXPECT_TRUE(cache_->load("k").ok());
}

TEST_F(OptimizedIrCacheTest, MalformedRecordsAreMisses) {
  ASSERT_TRUE(cache_->store("k", built_, "m").ok());
  for (std::string text :
       {"", "{", "[]", "{\"format\":2,\"size\":5004,\"blake3\":\"x\"}",
        "{\"format\":1,\"size\":-1,\"blake3\":\"x\"}", "{\"format\":1,\"size\":5004}"}) {
    testing::writeFile(cache_->dir() / "k.json", text);
    auto loaded = cache_->load("k");
    ASSERT_FALSE(loaded.ok()) << text;
    EXPECT_EQ(loaded.error().code(), ErrorCode::kParse) << text;
  }
}

TEST_F(OptimizedIrCacheTest, UnchangedSeesReplacementsAndRemovals) {
  auto stored = cache_->store("k", built_, "m");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(OptimizedIrCache::unchanged(*stored));
  auto again = cache_->store("k", built_, "m"); // Renamed over: another file.
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(OptimizedIrCache::unchanged(*stored));
  EXPECT_TRUE(OptimizedIrCache::unchanged(*again));
  std::filesystem::remove(again->bitcode);
  EXPECT_FALSE(OptimizedIrCache::unchanged(*again));
}

TEST_F(OptimizedIrCacheTest, ConcurrentWritersLeaveOneWholeEntry) {
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 30; ++i) {
        EXPECT_TRUE(cache_->store("same", built_, "m").ok());
        auto loaded = cache_->load("same");
        ASSERT_TRUE(loaded.ok()) << loaded.error().message(); // Never a partial file.
        EXPECT_EQ(loaded->size, contents_.size());
      }
    });
  for (auto& w : writers)
    w.join();
  EXPECT_EQ(testing::entriesWithPrefix(cache_->dir(), ""), 2u); // No temporary files left.
  EXPECT_EQ(scope_.registeredPaths(), 1u);                      // dir_ alone.
}

TEST_F(OptimizedIrCacheTest, MissingInputIsAnErrorAndLeavesNothing) {
  auto stored = cache_->store("k", dir_.path() / "missing.bc", "m");
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.error().code(), ErrorCode::kIo);
  EXPECT_THAT(stored.error().message(), HasSubstr("missing.bc"));
  EXPECT_EQ(testing::entriesWithPrefix(cache_->dir(), ""), 0u);
}

TEST_F(OptimizedIrCacheTest, UnusableDirectoryIsAnError) {
  testing::writeFile(dir_.path() / "file", "x");
  auto cache = OptimizedIrCache::open(scope_, dir_.path() / "file");
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.error().code(), ErrorCode::kIo);
}

} // namespace
} // namespace mlgo::env
