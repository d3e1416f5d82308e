//===- trace/trace_clang_fixture.h - the real-clang trace tests' fixture -*- C++ -*-===//
///
/// What the real-clang trace tests (trace_clang_test.cc, trace_verify_clang_test.cc)
/// share: a few small demo modules, file helpers, and a fixture with a baseline
/// cache shared by the suite and a temporary directory per case.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_TRACE_CLANG_FIXTURE_H
#define MLGO_TRACE_TRACE_CLANG_FIXTURE_H

#include "dev_mode_probe.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/env/compiler_session.h"
#include "mlgo/support/temp_dir.h"
#include "mlgo/trace/log_printer.h"
#include "mlgo/trace/log_summary.h"
#include "mlgo/trace/trace_header.h"
#include "mlgo/trace/trace_runner.h"
#include "mlgo/trace/trace_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <algorithm>

namespace mlgo::trace::clang_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// Small, quick modules of the demo corpus.
inline constexpr const char* kModules = "sha256.o|bignum.o|codecs.o";

inline std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void writeFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline size_t countLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class TraceClangTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    suiteScope_ = new support::CleanupScope;
    auto dir = support::TempDir::create(*suiteScope_, "mlgo-trace-clang-");
    ASSERT_TRUE(dir.ok());
    shared_ = new support::TempDir(std::move(*dir));
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
    delete suiteScope_; // After everything registered in it.
    suiteScope_ = nullptr;
  }
  void SetUp() override {
    auto dir = support::TempDir::create(scope_, "mlgo-trace-clang-case-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
  }

  /// Options tracing `filter` for `problem` into <case dir>/<name>; the
  /// baseline cache is shared by the whole suite.
  TraceOptions options(const std::string& problem, const std::string& name,
                       const std::string& filter = kModules) {
    TraceOptions o;
    o.environment.problem = problem;
    o.environment.clang = MLGO_CLANG;
    o.environment.jobs = 2;
    o.environment.cacheDir = shared_->path() / "cache";
    o.selection.moduleFilter = filter;
    o.output = dir_.path() / name;
    return o;
  }

  VerifyOptions verifyOptions(const TraceOptions& traced) {
    VerifyOptions v;
    v.trace = traced.output;
    v.environment = traced.environment;
    return v;
  }

  static inline support::CleanupScope* suiteScope_ = nullptr;
  static inline support::TempDir* shared_ = nullptr;
  support::CleanupScope scope_; // Outlives what is registered in it.
  support::TempDir dir_;
};

} // namespace mlgo::trace::clang_test

#endif // MLGO_TRACE_TRACE_CLANG_FIXTURE_H
