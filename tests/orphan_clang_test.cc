//===- tests/orphan_clang_test.cc - compilers die with a killed server ----===//
///
/// A server killed with SIGKILL cannot clean up, yet its clangs (each waiting
/// in interactive mode for an advice that never comes) must not outlive it:
/// they die with the server's spawner thread (PR_SET_PDEATHSIG, support/spawn.h).
/// Real clang-22 over the demo corpus.
///
//===----------------------------------------------------------------------===//
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>

namespace mlgo {
namespace {

using testing::LineClient;
using testing::ServerProcess;

/// The process's state letter from /proc/<pid>/stat, or 0 when it is gone.
char processState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size())
    return 0;
  return stat[close + 2];
}

std::string commandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (char& c : text)
    if (c == '\0')
      c = ' ';
  return text;
}

/// Entries of `dir` whose name starts with `prefix`.
std::vector<std::string> entries(const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().filename().string().starts_with(prefix))
      names.push_back(entry.path().filename().string());
  return names;
}

TEST(OrphanClang, CompilersDieWithAKilledServer) {
  std::string root = (std::filesystem::temp_directory_path() / "mlgo-orphan-XXXXXX").string();
  ASSERT_NE(::mkdtemp(root.data()), nullptr);
  ServerProcess server({"--problem=inlining", "--no-disk-cache", "--jobs=4", "--temp-dir=" + root});
  ASSERT_TRUE(server.running()) << server.log();
  std::vector<LineClient> clients;
  const char* modules[] = {"sha256.o", "bignum.o", "sha256.o", "bignum.o"};
  for (int i = 0; i < 4; ++i) {
    clients.push_back(server.connect());
    ASSERT_TRUE(clients.back().connected());
    std::string reply = clients.back().call(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"reset\",\"params\":{\"module\":\"" +
        std::string(modules[i]) + "\"}}");
    ASSERT_NE(reply.find("\"observation\""), std::string::npos) << reply;
  }
  // Every open episode's clang waits for its advice now.
  std::vector<pid_t> clangs;
  for (pid_t child : server.children())
    if (commandLine(child).find("interactive") != std::string::npos)
      clangs.push_back(child);
  ASSERT_EQ(clangs.size(), 4u) << "children of the server: " << server.children().size();

  pid_t serverPid = server.pid();
  ASSERT_TRUE(server.killHard());
  std::this_thread::sleep_for(std::chrono::seconds(1));

  int alive = 0;
  std::ostringstream survivors;
  for (pid_t clang : clangs) {
    char state = processState(clang);
    // Reparented to init (or a subreaper) and reaped, or a zombie not yet
    // reaped: both are dead. Anything else still runs.
    if (state != 0 && state != 'Z' && commandLine(clang).find("interactive") != std::string::npos) {
      ++alive;
      survivors << " " << clang << "(" << state << ")";
      ::kill(clang, SIGKILL); // Leave nothing behind even when failing.
    }
  }
  EXPECT_EQ(alive, 0) << "clangs still alive 1 s after the server died:" << survivors.str();

  // Its episodes' directories (fifos and all) stay behind...
  std::string dead = "mlgo-env-episode-" + std::to_string(serverPid) + ".";
  EXPECT_EQ(entries(root, dead).size(), 4u);
  // ...until the next server on the same root starts. It also probes clang
  // under --temp-dir: with $TMPDIR unusable it starts all the same.
  ServerProcess next({"--problem=inlining", "--no-disk-cache", "--jobs=1", "--temp-dir=" + root},
                     {"TMPDIR=/nonexistent-mlgo-tmp"});
  EXPECT_TRUE(next.running()) << next.log();
  EXPECT_TRUE(entries(root, dead).empty());
  next.stop();
  std::filesystem::remove_all(root);
}

} // namespace
} // namespace mlgo
