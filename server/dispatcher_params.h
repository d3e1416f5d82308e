//===- server/dispatcher_params.h - shared request helpers ----*- C++ -*-===//
///
/// What dispatcher.cc and dispatcher_step.cc both read requests with.
/// Internal to the server library.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "mlgo/protocol/observation_codec.h"
#include "mlgo/protocol/rpc.h"
#include "mlgo/support/result.h"

#include <optional>

namespace mlgo::server::detail {

/// Protocol code for an environment error outside step's action checks.
protocol::rpc::Code codeFor(const Error& error);

/// The optional `encoding` parameter of `params`; kInvalidArgument naming
/// the accepted values when it is something else.
Result<std::optional<protocol::TensorEncoding>> encodingParam(const llvm::json::Object& params);

} // namespace mlgo::server::detail
