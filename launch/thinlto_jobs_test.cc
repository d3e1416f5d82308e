//===- launch/thinlto_jobs_test.cc - lld's ThinLTO job files ----------------===//
#include "mlgo/launch/thinlto_jobs.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace mlgo::launch {
namespace {

std::filesystem::path write(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("mlgo-thinlto-jobs-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(ThinLtoJobsTest, EachJobIsTheCommonArgumentsThenItsOwn) {
  auto path = write("ok.json", R"({"common": {"linker_output": "p", "args": ["cc", "-c", "-O2"],
    "inputs": []}, "jobs": [{"args": ["a.o", "-o", "a.native.o"], "inputs": ["a.o"],
    "outputs": ["a.native.o"]}, {"args": ["b.o", "-o", "b.native.o"]}]})");
  auto jobs = readThinLtoJobs(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[1].command,
            (std::vector<std::string>{"cc", "-c", "-O2", "b.o", "-o", "b.native.o"}));
  EXPECT_EQ((*jobs)[0].outputs, (std::vector<std::string>{"a.native.o"}));
}

TEST(ThinLtoJobsTest, RefusesWhatIsNotAJobFileNamingIt) {
  struct Case {
    const char *text, *why;
  } cases[] = {
      {"{", "not JSON: "},
      {R"({"jobs": []})", "needs common.args (the compiler first) and a jobs list"},
      {R"({"common": {"args": []}, "jobs": []})", "needs common.args (the compiler first)"},
      {R"({"common": {"args": ["cc"]}, "jobs": [{"args": [1]}]})",
       "a job without an args list of strings"},
      {R"({"common": {"args": ["cc"]}, "jobs": [{"args": [], "outputs": [2]}]})",
       "a job whose outputs are not strings"},
  };
  for (const Case& c : cases) {
    auto path = write("bad.json", c.text);
    auto jobs = readThinLtoJobs(path);
    std::filesystem::remove(path);
    ASSERT_FALSE(jobs.ok()) << c.text;
    EXPECT_EQ(jobs.error().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_NE(jobs.error().message().find("ThinLTO job file '" + path.string() + "': " + c.why),
              std::string::npos)
        << jobs.error().message();
  }
  auto missing = readThinLtoJobs("/nonexistent/jobs.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kIo);
  EXPECT_EQ(missing.error().message(), "ThinLTO job file '/nonexistent/jobs.json': cannot be "
                                       "read: No such file or directory");
}

TEST(ThinLtoJobsTest, RunsTheJobsAndNamesOneThatFails) {
  support::CleanupScope scope;
  auto ok = write("run.json", R"({"common": {"args": ["true"]}, "jobs": [{"args": ["-o", "x"]},
    {"args": ["-o", "y"]}, {"args": ["-o", "z"]}]})");
  EXPECT_TRUE(runThinLtoJobs(ok, 2, scope).ok());
  auto bad = write("fail.json", R"({"common": {"args": ["false"]}, "jobs": [{"args": ["-o", "q.o"]}]})");
  auto silent = write("silent.json", R"({"common": {"args": ["true"]}, "jobs": [{"args": ["-o", "r.o"],
    "outputs": ["/nonexistent/r.o"]}]})");
  Status none = runThinLtoJobs(silent, 2, scope);
  std::filesystem::remove(silent);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("did not write '/nonexistent/r.o'"), std::string::npos);
  Status st = runThinLtoJobs(bad, 2, scope);
  std::filesystem::remove(ok);
  std::filesystem::remove(bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("'q.o'"), std::string::npos) << st.error().message();
}

} // namespace
} // namespace mlgo::launch
