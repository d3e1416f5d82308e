//===- support/shutdown_test.cc - emergencyCleanup leaves nothing behind --===//
//
// emergencyCleanup() closes the process-wide registries for good, so every
// test runs it in a death-test child (a forked copy) that ends with _exit,
// as the interrupt handler's raise() would, and the parent then looks at
// what is left on disk.
//
//===----------------------------------------------------------------------===//
#include "mlgo/support/shutdown.h"
#include "mlgo/support/subprocess.h"
#include "mlgo/support/temp_dir.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <stdlib.h>
#include <string>
#include <thread>
#include <vector>

namespace mlgo::support {
namespace {

namespace fs = std::filesystem;

class ShutdownTest : public ::testing::Test {
protected:
  // The "fast" death-test style forks this process without exec, so the
  // child works in the same directory the parent then inspects. That
  // directory is made without TempDir: a registered path would be removed
  // by the child's cleanup along with everything else.
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "fast");
    std::string pattern = (TempDir::systemTempDir() / "mlgo-env-shutdown-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::vector<std::string> entries(const fs::path& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      names.push_back(entry.path().filename().string());
    return names;
  }

  fs::path dir_;
};

// Threads keep creating temporary directories (and files in them, as an
// episode makes its fifos) while the cleanup runs and the process then dies
// at once. A directory made just before the cleanup but registered after it
// would survive; none may.
TEST_F(ShutdownTest, NothingCreatedAroundTheCleanupSurvives) {
  fs::path parent = dir_;
  EXPECT_EXIT(
      {
        std::atomic<unsigned> created{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
          threads.emplace_back([&] {
            std::vector<TempDir> held;
            for (;;) { // Until _exit.
              auto dir = TempDir::create("mlgo-env-episode-", parent);
              if (!dir.ok())
                continue; // Refused: shutting down.
              ++created;
              std::ofstream(dir->path() / "channel.in") << "x";
              held.push_back(std::move(*dir));
              if (held.size() > 8)
                held.erase(held.begin());
            }
          });
        while (created.load() < 200)
          std::this_thread::yield();
        shutdown::emergencyCleanup();
        // After the cleanup nothing new can appear.
        if (TempDir::create("mlgo-env-late-", parent).ok())
          _exit(3);
        _exit(0); // Like the handler's raise(): the threads never finish.
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(entries(parent), std::vector<std::string>{});
}

// A SIGKILLed child may still be finishing a system call when kill()
// returns; the cleanup waits until it is dead before removing directories.
TEST_F(ShutdownTest, CleanupWaitsForTheKilledChildrenToDie) {
  fs::path parent = dir_;
  EXPECT_EXIT(
      {
        std::vector<std::unique_ptr<Subprocess>> children;
        for (int i = 0; i < 3; ++i) {
          auto child = Subprocess::spawn({{"sleep", "100"}, {}});
          if (!child.ok())
            _exit(2);
          children.push_back(std::move(*child));
        }
        if (shutdown::emergencyCleanup() != 3)
          _exit(3);
        for (const auto& child : children) {
          siginfo_t info = {};
          // Dead (a zombie its owner has not reaped), not merely signalled.
          if (::waitid(P_PID, static_cast<id_t>(child->pid()), &info,
                       WEXITED | WNOWAIT | WNOHANG) != 0 ||
              info.si_pid != child->pid())
            _exit(4);
        }
        if (Subprocess::spawn({{"true"}, {}}).ok())
          _exit(5); // No spawn after the cleanup.
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(entries(parent), std::vector<std::string>{});
}

} // namespace
} // namespace mlgo::support
