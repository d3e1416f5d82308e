//===- protocol/fuzz_rpc_request.cc - libFuzzer target for request decoding -===//
///
/// Decodes arbitrary bytes as a request line and answers every item the way
/// the server does (an error response, or a result echoing the params). Must
/// never crash, hang or leak, and every response must itself be valid JSON.
///
//===----------------------------------------------------------------------===//
#include "mlgo/protocol/observation_codec.h"
#include "mlgo/protocol/rpc.h"

#include <cstdlib>

using namespace mlgo::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto line = rpc::decodeLine(text, 64);
  if (line.items.empty())
    std::abort();
  std::vector<std::string> responses;
  for (auto& item : line.items) {
    if (auto* bad = std::get_if<rpc::BadRequest>(&item)) {
      responses.push_back(rpc::encodeError(bad->id, bad->code, bad->message));
      continue;
    }
    auto& request = std::get<rpc::Request>(item);
    const llvm::json::Object params = request.paramsObject();
    (void)rpc::optionalInt(params, "episode");
    (void)rpc::optionalString(params, "module");
    if (const auto* action = params.get("action"))
      (void)decodeAction(*action);
    if (request.id)
      responses.push_back(rpc::encodeResult(*request.id, llvm::json::Object(params)));
  }
  for (const auto& response : responses)
    if (!llvm::json::parse(response))
      std::abort();
  if (line.batch && !responses.empty() && !llvm::json::parse(rpc::joinBatch(responses)))
    std::abort();
  return 0;
}
