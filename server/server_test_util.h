//===- server/server_test_util.h - helpers for server unit tests -*- C++ -*-===//
///
/// \file
/// Private to server/ tests: an Environment on the fake compiler driver
/// (env/testing/fake_driver.h; no clang) and JSON helpers for replies.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SERVER_SERVER_TEST_UTIL_H
#define MLGO_SERVER_SERVER_TEST_UTIL_H

#include "fake_driver.h"

#include <gtest/gtest.h>
#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::server::testing {

using env::testing::FakeEnvironment;
using env::testing::FakeEnvironmentSetup;

inline std::unique_ptr<FakeEnvironment> makeFake(FakeEnvironmentSetup setup = {}) {
  auto created = FakeEnvironment::create(std::move(setup));
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(*created) : nullptr;
}

/// A reply line parsed; a JSON null when it is not JSON (the test fails).
inline llvm::json::Value parse(std::string_view line) {
  auto value = llvm::json::parse(line);
  if (!value) {
    ADD_FAILURE() << "reply is not JSON: " << llvm::toString(value.takeError()) << "\n" << line;
    return nullptr;
  }
  return std::move(*value);
}

/// The error code of a response, or 0 for a result.
inline int64_t errorCode(const llvm::json::Value& response) {
  const auto* object = response.getAsObject();
  if (object == nullptr)
    return 0;
  const auto* error = object->getObject("error");
  return error ? error->getInteger("code").value_or(0) : 0;
}

inline const llvm::json::Object* result(const llvm::json::Value& response) {
  const auto* object = response.getAsObject();
  return object ? object->getObject("result") : nullptr;
}

inline std::string request(int id, std::string_view method, std::string_view params = "{}") {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"" +
         std::string(method) + "\",\"params\":" + std::string(params) + "}";
}

} // namespace mlgo::server::testing

#endif // MLGO_SERVER_SERVER_TEST_UTIL_H
