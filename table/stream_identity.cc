//===- table/stream_identity.cc - which module a compile is ----------------===//
#include "mlgo/table/stream_identity.h"

#include "mlgo/table/sha256.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <cstring>

namespace mlgo::table {

struct StreamIdentity::Hashes {
  llvm::SHA256 whole;
  std::vector<uint8_t> bytes; ///< One observation's identity (or site) bytes.

  /// SHA-256 of the tensors `order` names, concatenated (sha256.h: on the
  /// CPU's SHA extensions where it has them).
  Sha256Digest digest(std::span<const size_t> order,
                      std::span<const std::span<const std::byte>> tensors) {
    bytes.clear();
    for (size_t i : order) {
      const auto* data = reinterpret_cast<const uint8_t*>(tensors[i].data());
      bytes.insert(bytes.end(), data, data + tensors[i].size());
    }
    return sha256(bytes);
  }
};

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
    if (std::find(kModuleWideFeatures.begin(), kModuleWideFeatures.end(), name) ==
        kModuleWideFeatures.end())
      identity.siteOrder_.push_back(*index);
  }
  identity.hashes_ = std::make_unique<Hashes>();
  return identity;
}

StreamIdentity::StreamIdentity(StreamIdentity&&) noexcept = default;
StreamIdentity& StreamIdentity::operator=(StreamIdentity&&) noexcept = default;
StreamIdentity::~StreamIdentity() = default;

void StreamIdentity::add(std::span<const std::span<const std::byte>> tensors) {
  Sha256Digest digest = hashes_->digest(order_, tensors);
  if (count_ == 0)
    first_ = llvm::toHex(digest, /*LowerCase=*/true);
  hashes_->whole.update(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()));
  ++count_;
}

uint64_t StreamIdentity::siteKey(std::span<const std::span<const std::byte>> tensors) const {
  Sha256Digest digest = hashes_->digest(siteOrder_, tensors);
  uint64_t key = 0;
  std::memcpy(&key, digest.data(), sizeof key);
  return key;
}

std::string StreamIdentity::whole() const {
  llvm::SHA256 copy = hashes_->whole;
  auto digest = copy.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

} // namespace mlgo::table
