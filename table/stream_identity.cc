//===- table/stream_identity.cc - which module a compile is -----------------===//
#include "mlgo/table/stream_identity.h"

#include <algorithm>
#include <cstring>

namespace mlgo::table {
namespace {

bool among(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

} // namespace

std::vector<std::string> identityFeatures(std::span<const std::string> names) {
  std::vector<std::string> out;
  for (const std::string& name : names)
    if (!among(kNotIdentityFeatures, name))
      out.push_back(name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> siteFeatures(std::span<const std::string> features) {
  std::vector<std::string> out;
  for (const std::string& name : features)
    if (!among(kNotSiteFeatures, name))
      out.push_back(name);
  return out;
}

Sha256Digest identityDigest(std::span<const std::span<const std::byte>> tensors,
                            std::vector<uint8_t>& scratch) {
  scratch.clear();
  for (std::span<const std::byte> tensor : tensors) {
    const auto* data = reinterpret_cast<const uint8_t*>(tensor.data());
    scratch.insert(scratch.end(), data, data + tensor.size());
  }
  return sha256(scratch);
}

uint64_t siteKey(std::span<const std::span<const std::byte>> tensors,
                 std::vector<uint8_t>& scratch) {
  Sha256Digest digest = identityDigest(tensors, scratch);
  uint64_t key = 0;
  std::memcpy(&key, digest.data(), sizeof key);
  return key;
}

std::string streamHex(std::span<const Sha256Digest> digests) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(digests.data());
  Sha256Digest whole = sha256(std::span(bytes, digests.size() * sizeof(Sha256Digest)));
  return hex(whole);
}

Result<StreamIdentity> StreamIdentity::create(const protocol::LogHeader& header,
                                              std::span<const std::string> features) {
  StreamIdentity identity;
  for (const std::string& name : features) {
    auto index = header.featureIndex(name);
    if (!index)
      return makeError(ErrorCode::kNotFound,
                       "the compiler does not send the feature '{}' the table identifies "
                       "modules by",
                       name);
    identity.order_.push_back(*index);
    if (!among(kNotSiteFeatures, name))
      identity.siteOrder_.push_back(*index);
  }
  return identity;
}

std::span<const std::span<const std::byte>>
StreamIdentity::pick(std::span<const size_t> order,
                     std::span<const std::span<const std::byte>> tensors) const {
  views_.clear();
  for (size_t i : order)
    views_.push_back(tensors[i]);
  return views_;
}

void StreamIdentity::add(std::span<const std::span<const std::byte>> tensors) {
  digests_.push_back(identityDigest(pick(order_, tensors), scratch_));
  if (digests_.size() == 1)
    first_ = hex(digests_.front());
}

uint64_t StreamIdentity::siteKey(std::span<const std::span<const std::byte>> tensors) const {
  return table::siteKey(pick(siteOrder_, tensors), scratch_);
}

} // namespace mlgo::table
