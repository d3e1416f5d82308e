//===- server/line_handler.cc - one request line to its reply -------------===//
#include "mlgo/server/line_handler.h"

namespace mlgo::server {

std::optional<std::string> joinReplies(std::vector<std::optional<std::string>>& replies,
                                       bool batch) {
  if (!batch) {
    if (replies.empty() || !replies[0])
      return std::nullopt;
    return std::move(*replies[0]);
  }
  // A reply carrying a binary observation is its JSON, a newline and the
  // frame (JSON text has no raw newline): the array of the JSON parts comes
  // first, then every frame in item order.
  std::vector<std::string> parts;
  std::string frames;
  bool framed = false;
  for (auto& reply : replies) {
    if (!reply)
      continue;
    size_t newline = reply->find('\n');
    if (newline != std::string::npos) {
      framed = true;
      frames.append(*reply, newline + 1);
      reply->resize(newline);
    }
    parts.push_back(std::move(*reply));
  }
  if (parts.empty())
    return std::nullopt;
  std::string line = protocol::rpc::joinBatch(parts);
  if (framed) {
    line += '\n';
    line += frames;
  }
  return line;
}

std::optional<std::string> handleLine(std::string_view line, Dispatcher& dispatcher,
                                      ConnectionEpisodes& episodes, size_t maxBatch) {
  protocol::rpc::Line decoded = protocol::rpc::decodeLine(line, maxBatch);
  std::vector<std::optional<std::string>> replies;
  replies.reserve(decoded.items.size());
  for (const auto& item : decoded.items) {
    if (const auto* bad = std::get_if<protocol::rpc::BadRequest>(&item))
      replies.push_back(protocol::rpc::encodeError(bad->id, bad->code, bad->message));
    else
      replies.push_back(dispatcher.handle(std::get<protocol::rpc::Request>(item), episodes));
  }
  return joinReplies(replies, decoded.batch);
}

} // namespace mlgo::server
