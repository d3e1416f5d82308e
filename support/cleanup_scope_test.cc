//===- support/cleanup_scope_test.cc - cleanup leaves nothing behind -------===//
//
// Scopes are owned values, so every test cleans up in this very process (no
// death test, no fork): two scopes side by side show that one's cleanup
// leaves the other's children running and its paths in place.
//
//===----------------------------------------------------------------------===//
#include "mlgo/support/cleanup_scope.h"
#include "mlgo/support/subprocess.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace mlgo::support {
namespace {

namespace fs = std::filesystem;
using Children = std::vector<std::unique_ptr<Subprocess>>;

/// Dead (a zombie its owner has not reaped yet), not merely signalled.
bool isDead(const Subprocess& child) {
  siginfo_t info = {};
  return ::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
         info.si_pid == child.pid();
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  return names;
}

class CleanupScopeTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto root = TempDir::create(rootScope_, "mlgo-env-scope-test-");
    ASSERT_TRUE(root.ok()) << root.error().message();
    root_ = std::move(*root);
  }

  /// Starts `count` sleeping children in `scope`.
  static void startSleepers(CleanupScope& scope, size_t count, Children& into) {
    for (size_t i = 0; i < count; ++i) {
      auto child = Subprocess::spawn(scope, {{"sleep", "100"}, {}});
      ASSERT_TRUE(child.ok()) << child.error().message();
      into.push_back(std::move(*child));
    }
  }

  // The test's own directory, in a scope no test cleans up.
  CleanupScope rootScope_;
  TempDir root_;
};

// The point of owning the scope: cleaning up one run leaves another run in
// the same process alone.
TEST_F(CleanupScopeTest, TwoScopesCleanUpIndependently) {
  CleanupScope first, second;
  Children firstChildren, secondChildren;
  startSleepers(first, 2, firstChildren);
  startSleepers(second, 3, secondChildren);
  auto firstDir = TempDir::create(first, "mlgo-env-episode-", root_.path());
  auto secondDir = TempDir::create(second, "mlgo-env-episode-", root_.path());
  ASSERT_TRUE(firstDir.ok() && secondDir.ok());
  std::ofstream(firstDir->path() / "channel.in") << "x";
  EXPECT_EQ(first.liveChildren(), 2u);
  EXPECT_EQ(second.registeredPaths(), 1u);

  EXPECT_EQ(first.cleanup(), 2u);
  EXPECT_TRUE(first.cleanupBegan());
  EXPECT_FALSE(second.cleanupBegan());
  for (const auto& child : firstChildren)
    EXPECT_TRUE(isDead(*child));
  for (const auto& child : secondChildren)
    EXPECT_FALSE(child->tryReap()) << "the other scope's child was killed";
  EXPECT_FALSE(fs::exists(firstDir->path()));
  EXPECT_TRUE(fs::is_directory(secondDir->path()));

  // The cleaned-up scope refuses new work; the other one does not.
  auto late = Subprocess::spawn(first, {{"true"}, {}});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code(), ErrorCode::kIo);
  EXPECT_FALSE(TempDir::create(first, "mlgo-env-late-", root_.path()).ok());
  auto more = Subprocess::spawn(second, {{"true"}, {}});
  ASSERT_TRUE(more.ok()) << more.error().message();
  EXPECT_TRUE((*more)->waitUntil(Clock::now() + std::chrono::seconds(5)).ok());
  EXPECT_TRUE((*more)->exitStatus()->success());

  // Owners reap as usual; the other scope's own cleanup gets the rest.
  for (const auto& child : firstChildren)
    EXPECT_TRUE(child->tryReap());
  EXPECT_EQ(first.liveChildren(), 0u);
  EXPECT_EQ(second.cleanup(), 3u);
  EXPECT_FALSE(fs::exists(secondDir->path()));
  EXPECT_EQ(entries(root_.path()), std::vector<std::string>{});
}

// Threads keep creating temporary directories (and files in them, as an
// episode makes its fifos) while the cleanup runs. A directory made just
// before the cleanup but registered after it would survive; none may, even
// though the threads still hold their TempDirs when we look.
TEST_F(CleanupScopeTest, NothingCreatedAroundTheCleanupSurvives) {
  CleanupScope scope;
  fs::path parent = root_.path();
  std::atomic<unsigned> created{0};
  std::vector<std::vector<TempDir>> held(4);
  std::vector<std::thread> threads;
  for (auto& mine : held)
    threads.emplace_back([&, mine = &mine] {
      for (;;) {
        auto dir = TempDir::create(scope, "mlgo-env-episode-", parent);
        if (!dir.ok())
          return; // Refused: the scope is cleaning up.
        ++created;
        std::ofstream(dir->path() / "channel.in") << "x";
        mine->push_back(std::move(*dir));
        if (mine->size() > 8)
          mine->erase(mine->begin());
      }
    });
  while (created.load() < 200)
    std::this_thread::yield();
  scope.cleanup();
  EXPECT_EQ(entries(parent), std::vector<std::string>{});
  for (std::thread& thread : threads)
    thread.join();
  EXPECT_EQ(entries(parent), std::vector<std::string>{});
  EXPECT_EQ(scope.registeredPaths(), 0u);
}

// A SIGKILLed child may still be finishing a system call when killpg()
// returns; the cleanup waits until it is dead before removing directories.
TEST_F(CleanupScopeTest, CleanupWaitsForTheKilledChildrenToDie) {
  CleanupScope scope;
  Children children;
  startSleepers(scope, 3, children);
  EXPECT_EQ(scope.cleanup(), 3u);
  for (const auto& child : children)
    EXPECT_TRUE(isDead(*child));
  EXPECT_EQ(scope.cleanup(), 3u) << "idempotent: the unreaped children are still registered";
  for (const auto& child : children) {
    ASSERT_TRUE(child->tryReap());
    EXPECT_EQ(child->exitStatus()->signal, SIGKILL);
  }
  EXPECT_EQ(scope.cleanup(), 0u);
}

// After a cleanup nothing is committed: an interrupted run never replaces a
// result. Another scope still commits.
TEST_F(CleanupScopeTest, CommitsStopAtTheCleanupOfTheirScopeOnly) {
  CleanupScope first, second;
  auto makeTemp = [&](CleanupScope& scope, const std::string& name) {
    return scope.createPath([&]() -> Result<fs::path> {
      fs::path path = root_.path() / name;
      std::ofstream(path) << name;
      return path;
    });
  };
  auto firstTemp = makeTemp(first, "a.tmp");
  auto secondTemp = makeTemp(second, "b.tmp");
  ASSERT_TRUE(firstTemp.ok() && secondTemp.ok());
  first.cleanup();
  std::pair<fs::path, fs::path> firstRename{*firstTemp, root_.path() / "a"};
  std::pair<fs::path, fs::path> secondRename{*secondTemp, root_.path() / "b"};
  Status refused = first.commitPaths({&firstRename, 1});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kIo);
  ASSERT_TRUE(second.commitPaths({&secondRename, 1}).ok());
  EXPECT_EQ(second.registeredPaths(), 0u);
  EXPECT_EQ(entries(root_.path()), std::vector<std::string>{"b"});
}

// A scope that goes away takes what is still registered with it.
TEST_F(CleanupScopeTest, DestroyingAScopeCleansUpWhatIsLeft) {
  fs::path leftover;
  {
    CleanupScope scope;
    auto path = scope.createPath([&]() -> Result<fs::path> {
      fs::path made = root_.path() / "leftover";
      fs::create_directory(made);
      return made;
    });
    ASSERT_TRUE(path.ok());
    leftover = *path;
  }
  EXPECT_FALSE(fs::exists(leftover));
}

} // namespace
} // namespace mlgo::support
