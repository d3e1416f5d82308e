//===- env/optimized_ir_service_test.cc - a real build, interrupted ----------===//
//
// A module's optimised-IR build through the real process driver, the fake
// compiler (testing/fake_compiler.cc) standing in for clang: when it hangs,
// the caller's interrupt stops the build promptly, kills and reaps the
// compiler and leaves neither its directory nor a cache entry; the next
// call builds again. The same through an Environment on the in-process
// fake driver: optimized_ir_fake_test.cc.
//
#include "optimized_ir_service.h"

#include "testing/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace mlgo::env {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class OptimizedIrServiceTest : public ::testing::Test {
protected:
  void SetUp() override {
    fds_ = testing::openDescriptors();
    auto dir = support::TempDir::create(scope_, "mlgo-env-optir-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    fs::create_directories(tmp());
    auto problem = findProblem("regalloc-priority");
    ASSERT_TRUE(problem.ok());
    planner_.emplace(scope_, **problem, MLGO_FAKE_COMPILER, ProblemOptions{}, corpus::FlagRules{},
                     tmp());
    auto cache = OptimizedIrCache::open(scope_, dir_.path() / "cache");
    ASSERT_TRUE(cache.ok());
    SessionLimits limits;
    limits.scope = &scope_;
    limits.compileTimeout = 60s; // Never reached: the interrupt comes first.
    service_.emplace(*driver_, *planner_, slots_, std::move(*cache), "fake clang", limits);
    module_.name = "alpha";
    module_.args = {"-cc1", "-O2"};
  }

  void TearDown() override {
    service_.reset();
    dir_.remove();
    EXPECT_EQ(testing::childProcesses(), 0u);
    EXPECT_EQ(testing::openDescriptors(), fds_);
  }

  fs::path tmp() const { return dir_.path() / "tmp"; }
  /// The module's "bitcode": a fake-compiler script.
  void writeModule(const std::vector<std::string>& lines) {
    module_.bitcodePath = testing::writeScript(dir_.path(), "alpha", lines);
  }

  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
  size_t fds_ = 0;
  std::shared_ptr<CompilerDriver> driver_ = processCompilerDriver();
  std::optional<CompilePlanner> planner_;
  JobSlots slots_{1};
  std::optional<OptimizedIrService> service_;
  corpus::ModuleSpec module_;
};

TEST_F(OptimizedIrServiceTest, AnInterruptStopsAHungBuildAndLeavesNothing) {
  writeModule({"fault never-open-hang"}); // Sleeps forever once started.
  testing::CtrlC ctrlC;
  support::Interrupt interrupt;
  support::InterruptScope installed(interrupt, &ctrlC.check);
  // 100 ms after the compile started: well inside the wait for it.
  std::thread firer = ctrlC.fireWhen([] { return testing::childProcesses() > 0; }, 100ms);
  auto prepared = service_->prepare(module_, &interrupt);
  auto returned = support::Clock::now();
  firer.join();

  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().code(), ErrorCode::kInterrupted);
  EXPECT_THAT(prepared.error().message(), HasSubstr("module alpha: optimising its IR"));
  EXPECT_THAT(prepared.error().message(), HasSubstr("interrupted"));
  EXPECT_LT(returned - ctrlC.firedAt, 2s); // A slice is 50 ms; generous for a busy machine.
  EXPECT_EQ(testing::childProcesses(), 0u);
  EXPECT_EQ(testing::entriesWithPrefix(tmp(), "mlgo-env-optimize-"), 0u);
  EXPECT_TRUE(fs::is_empty(service_->cache().dir()));
  EXPECT_EQ(slots_.inUse(), 0u);

  // Not remembered: the next call builds, and only that one caches.
  testing::writeFile(dir_.path() / "alpha.ir", "fake optimised IR");
  writeModule({"object alpha.ir"});
  auto again = service_->prepare(module_);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(again->built);
  EXPECT_EQ(testing::readFile(again->spec->bitcodePath), "fake optimised IR");
}

} // namespace
} // namespace mlgo::env
