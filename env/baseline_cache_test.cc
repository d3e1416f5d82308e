//===- env/baseline_cache_test.cc - default scores on disk -----------------===//
#include "mlgo/env/baseline_cache.h"

#include "cache_files.h"
#include "mlgo/support/temp_dir.h"
#include "testing/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

namespace mlgo::env {
namespace {

class BaselineCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-env-cache-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
};

ModuleScore sample() {
  ModuleScore score;
  score.total = 1234.5678901234567;
  score.contexts = {{"_Z3fooi", 1000.1}, {"bar \"quoted\"", 234.4678901234567}};
  return score;
}

TEST_F(BaselineCacheTest, RoundTripsExactly) {
  auto cache = BaselineCache::open(scope_, dir_.path() / "a" / "b");
  ASSERT_TRUE(cache.ok()) << cache.error().message();
  std::string key = baselineKey("digest", std::vector<std::string>{"-cc1", "-O2"}, "clang 22");
  EXPECT_FALSE(cache->load(key).has_value());
  ASSERT_TRUE(cache->store(key, sample()).ok());
  auto loaded = cache->load(key);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->total, sample().total); // Bit-exact doubles.
  EXPECT_EQ(loaded->contexts, sample().contexts);
}

TEST_F(BaselineCacheTest, KeyDependsOnEveryPart) {
  std::vector<std::string> args = {"-cc1", "-O2"};
  std::string key = baselineKey("d", args, "v");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, baselineKey("d", args, "v"));
  EXPECT_NE(key, baselineKey("e", args, "v"));
  EXPECT_NE(key, baselineKey("d", args, "w"));
  EXPECT_NE(key, baselineKey("d", std::vector<std::string>{"-cc1", "-Oz"}, "v"));
  // Argument boundaries matter.
  EXPECT_NE(baselineKey("d", std::vector<std::string>{"ab", "c"}, "v"),
            baselineKey("d", std::vector<std::string>{"a", "bc"}, "v"));
}

TEST_F(BaselineCacheTest, MalformedEntriesAreMisses) {
  auto cache = BaselineCache::open(scope_, dir_.path());
  ASSERT_TRUE(cache.ok());
  for (std::string text : {"", "{", "[]", "{\"format\":2,\"total\":1,\"contexts\":[]}",
                           "{\"format\":1,\"total\":\"x\",\"contexts\":[]}",
                           "{\"format\":1,\"total\":1,\"contexts\":[[1,2]]}"}) {
    testing::writeFile(dir_.path() / "k.json", text);
    EXPECT_FALSE(cache->load("k").has_value()) << text;
  }
}

TEST_F(BaselineCacheTest, ConcurrentWritersLeaveOneWholeEntry) {
  auto cache = BaselineCache::open(scope_, dir_.path());
  ASSERT_TRUE(cache.ok());
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      ModuleScore score = sample();
      score.total = t;
      for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE(cache->store("same", score).ok());
        auto loaded = cache->load("same");
        ASSERT_TRUE(loaded.has_value()); // Never a partial file.
        EXPECT_EQ(loaded->contexts, sample().contexts);
      }
    });
  for (auto& w : writers)
    w.join();
  EXPECT_EQ(testing::entriesWithPrefix(dir_.path(), ""), 1u); // No temporary files left.
}

TEST_F(BaselineCacheTest, UnusableDirectoryIsAnError) {
  testing::writeFile(dir_.path() / "file", "x");
  auto cache = BaselineCache::open(scope_, dir_.path() / "file");
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.error().code(), ErrorCode::kIo);
}

TEST_F(BaselineCacheTest, DefaultDirFollowsXdg) {
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(BaselineCache::defaultDir(), std::filesystem::path("/x/cache/mlgo-env"));
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(BaselineCache::defaultDir(), std::filesystem::path("/home/u/.cache/mlgo-env"));
}

TEST_F(BaselineCacheTest, FileDigestReadsContents) {
  testing::writeFile(dir_.path() / "a", "hello");
  testing::writeFile(dir_.path() / "b", "hello");
  testing::writeFile(dir_.path() / "c", "hellp");
  auto a = fileDigest(dir_.path() / "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, *fileDigest(dir_.path() / "b"));
  EXPECT_NE(*a, *fileDigest(dir_.path() / "c"));
  EXPECT_EQ(fileDigest(dir_.path() / "missing").error().code(), ErrorCode::kNotFound);
}

TEST_F(BaselineCacheTest, KeysHoldTheContentOfTheProfilesACompileReads) {
  // An IR-level profile is read again by every recompile: a profile rewritten
  // at the same path must not hit the old profile's entries.
  std::string profile = (dir_.path() / "p.profdata").string();
  testing::writeFile(profile, "one");
  detail::DigestMemo memo;
  auto keyed = [&](std::vector<std::string> args) {
    detail::addProfileContents(args, memo);
    return args;
  };
  std::vector<std::string> args = {"-cc1", "-O2", "-fprofile-instrument-use-path=" + profile};
  auto first = keyed(args);
  ASSERT_EQ(first.size(), args.size() + 1);
  EXPECT_TRUE(first.back().starts_with("<content of -fprofile-instrument-use-path>="))
      << first.back();
  EXPECT_EQ(keyed(args), first);
  testing::writeFile(profile, "two, longer"); // rewritten in place
  EXPECT_NE(keyed(args), first);
  EXPECT_EQ(keyed({"-cc1", "-O2"}), (std::vector<std::string>{"-cc1", "-O2"}));
  auto missing = keyed({"-fprofile-sample-use=" + (dir_.path() / "gone").string()});
  EXPECT_EQ(missing.back(), "<content of -fprofile-sample-use>=unreadable");
}

} // namespace
} // namespace mlgo::env
