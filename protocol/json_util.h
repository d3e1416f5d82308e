//===- protocol/json_util.h - llvm::json glue for the protocol layer -*- C++ -*-===//
///
/// \file
/// Private to protocol/: converts between TensorSpec and llvm::json values,
/// and writes LLVM's exact JSON bytes through llvm::json::OStream.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_PROTOCOL_JSON_UTIL_H
#define MLGO_PROTOCOL_JSON_UTIL_H

#include "mlgo/protocol/tensor_spec.h"

#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::protocol::detail {

/// Reads one spec object; `where` prefixes error messages.
Result<TensorSpec> specFromJson(const llvm::json::Value& value, std::string_view where);

/// Writes a spec exactly as LLVM's TensorSpec::toJSON does.
void writeSpec(llvm::json::OStream& out, const TensorSpec& spec);

/// Text of an llvm::Error, consuming it.
std::string takeMessage(llvm::Error error);

} // namespace mlgo::protocol::detail

#endif // MLGO_PROTOCOL_JSON_UTIL_H
