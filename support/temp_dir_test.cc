//===- support/temp_dir_test.cc - owner-tagged names and reaping orphans --===//
#include "mlgo/support/temp_dir.h"

#include "mlgo/support/cleanup_scope.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace mlgo::support {
namespace {

namespace fs = std::filesystem;

/// A pid that belonged to a process that has exited (reaped by us).
pid_t deadPid() {
  pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(TempDir, NameCarriesOwnerPidAndStartTime) {
  CleanupScope scope; // Outlives what is registered in it.
  auto root = TempDir::create(scope, "mlgo-env-tdtest-root-");
  ASSERT_TRUE(root.ok());
  auto dir = TempDir::create(scope, "mlgo-env-episode-", root->path());
  ASSERT_TRUE(dir.ok());
  std::string name = dir->path().filename().string();
  EXPECT_TRUE(name.starts_with("mlgo-env-episode-" + std::to_string(::getpid()) + "."));
  auto owner = TempDir::ownerOf(name);
  ASSERT_TRUE(owner.has_value()) << name;
  EXPECT_EQ(owner->pid, ::getpid());
  EXPECT_GT(owner->startTime, 0u);
  EXPECT_TRUE(TempDir::ownerAlive(*owner));
  EXPECT_FALSE(TempDir::ownerAlive({owner->pid, owner->startTime + 1})); // A recycled pid.
  EXPECT_FALSE(TempDir::ownerOf("mlgo-env-episode-XXXXXX").has_value());
  EXPECT_FALSE(TempDir::ownerOf("mlgo-env-episode-12.x-abcdef").has_value());
  EXPECT_FALSE(TempDir::ownerOf("random").has_value());
}

TEST(TempDir, ReapOrphansRemovesOnlyDirectoriesOfDeadOwners) {
  CleanupScope scope; // Outlives what is registered in it.
  auto root = TempDir::create(scope, "mlgo-env-tdtest-root-");
  ASSERT_TRUE(root.ok());
  const fs::path& r = root->path();
  auto live = TempDir::create(scope, "mlgo-env-episode-", r); // Ours: we are alive.
  ASSERT_TRUE(live.ok());
  pid_t dead = deadPid();
  uint64_t ourStart = TempDir::ownerOf(live->path().filename().string())->startTime;
  fs::path deadOwner = r / ("mlgo-env-episode-" + std::to_string(dead) + ".5-abcdef");
  fs::path recycled = r / ("mlgo-env-baseline-" + std::to_string(::getpid()) + "." +
                           std::to_string(ourStart + 7) + "-ghijkl");
  fs::path unrelated = r / ("other-" + std::to_string(dead) + ".5-abcdef");
  fs::path untagged = r / "mlgo-env-episode-abcdef";
  fs::path deadFile = r / ("mlgo-env-episode-" + std::to_string(dead) + ".5-fileXX");
  for (const fs::path& d : {deadOwner, recycled, unrelated, untagged})
    fs::create_directories(d);
  std::ofstream(deadOwner / "B.in") << "x"; // Contents go too.
  std::ofstream(deadFile) << "not a directory";

  EXPECT_EQ(TempDir::reapOrphans(r), 2u);
  EXPECT_FALSE(fs::exists(deadOwner));
  EXPECT_FALSE(fs::exists(recycled));
  EXPECT_TRUE(fs::exists(live->path()));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_TRUE(fs::exists(untagged));
  EXPECT_TRUE(fs::exists(deadFile));
  EXPECT_EQ(TempDir::reapOrphans(r), 0u);
  EXPECT_EQ(TempDir::reapOrphans(r / "no-such-dir"), 0u);
}

} // namespace
} // namespace mlgo::support
