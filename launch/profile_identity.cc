//===- launch/profile_identity.cc - the profile a compile reads ------------===//
#include "mlgo/launch/profile_identity.h"

#include "mlgo/table/sha256.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace mlgo::launch {
namespace {

/// The value of `arg` if it is `flag` followed by it (`flag` ends with '=').
bool valueOf(std::string_view arg, std::string_view flag, std::string& value) {
  if (!arg.starts_with(flag))
    return false;
  value = std::string(arg.substr(flag.size()));
  return true;
}

/// `-fprofile-use=F`: F, or F/default.profdata when F is a directory (or empty).
std::string profileUsePath(std::string path) {
  std::error_code ec;
  if (path.empty())
    return "default.profdata";
  if (std::filesystem::is_directory(path, ec))
    return (std::filesystem::path(path) / "default.profdata").string();
  return path;
}

using Digest = table::Sha256Digest;

Result<Digest> fileSha256(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code ec = buffer.getError();
    return makeError(ec == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound
                                                                : ErrorCode::kIo,
                     "the profile '{}' cannot be read: {}", path, ec.message());
  }
  llvm::StringRef bytes = (*buffer)->getBuffer();
  return table::sha256(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                         bytes.size()));
}

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  return llvm::toHex(bytes, /*LowerCase=*/true);
}

} // namespace

ProfileFiles profileFiles(std::span<const std::string> args) {
  ProfileFiles files;
  std::string value;
  for (const std::string& arg : args) {
    if (valueOf(arg, "-fprofile-instr-use=", value) ||
        valueOf(arg, "-fprofile-instrument-use-path=", value))
      files.instrumented = value;
    else if (valueOf(arg, "-fprofile-use=", value))
      files.instrumented = profileUsePath(value);
    else if (arg == "-fprofile-instr-use" || arg == "-fprofile-use")
      files.instrumented = "default.profdata";
    else if (arg == "-fno-profile-instr-use" || arg == "-fno-profile-use")
      files.instrumented.clear();
    else if (valueOf(arg, "-fprofile-sample-use=", value) ||
             valueOf(arg, "-fauto-profile=", value))
      files.sample = value;
    else if (arg == "-fno-profile-sample-use" || arg == "-fno-auto-profile")
      files.sample.clear();
  }
  return files;
}

std::string ProfileFiles::describe() const {
  if (!any())
    return "no profile";
  if (instrumented.empty() || sample.empty())
    return "'" + (instrumented.empty() ? sample : instrumented) + "'";
  return "'" + instrumented + "' and '" + sample + "'";
}

Result<std::string> profileIdentity(const ProfileFiles& files) {
  std::vector<Digest> digests;
  for (const std::string* path : {&files.instrumented, &files.sample}) {
    if (path->empty())
      continue;
    auto digest = fileSha256(*path);
    if (!digest.ok())
      return digest.error();
    digests.push_back(*digest);
  }
  if (digests.empty())
    return std::string();
  if (digests.size() == 1)
    return hex(digests.front());
  std::array<uint8_t, 64> both;
  std::copy(digests[0].begin(), digests[0].end(), both.begin());
  std::copy(digests[1].begin(), digests[1].end(), both.begin() + 32);
  return hex(table::sha256(both));
}

std::string describeProfile(std::string_view identity) {
  return identity.empty() ? std::string("no profile")
                          : "profile " + std::string(identity.substr(0, 12));
}

} // namespace mlgo::launch
