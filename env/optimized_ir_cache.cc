//===- env/optimized_ir_cache.cc - optimised IR on disk -------------------===//
#include "mlgo/env/optimized_ir_cache.h"

#include "cache_files.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>
#include <sstream>

namespace mlgo::env {
namespace {

constexpr int kFormat = 1;

OptimizedIrEntry entryFrom(std::filesystem::path bitcode, const detail::FileDigest& file) {
  OptimizedIrEntry entry;
  entry.bitcode = std::move(bitcode);
  entry.digest = file.digest;
  entry.device = file.identity.device;
  entry.inode = file.identity.inode;
  entry.size = file.identity.size;
  entry.mtimeNs = file.identity.mtimeNs;
  return entry;
}

/// The record's (size, digest), or kParse saying what is wrong with it.
Result<std::pair<uint64_t, std::string>> readRecord(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kNotFound, "no optimised-IR record {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  auto value = llvm::json::parse(text.str());
  if (!value) {
    llvm::consumeError(value.takeError());
    return makeError(ErrorCode::kParse, "optimised-IR record {} is not JSON", path.string());
  }
  const llvm::json::Object* object = value->getAsObject();
  std::optional<int64_t> size = object ? object->getInteger("size") : std::nullopt;
  std::optional<llvm::StringRef> digest = object ? object->getString("blake3") : std::nullopt;
  if (object == nullptr || object->getInteger("format") != kFormat || !size || *size < 0 ||
      !digest || digest->size() != 64)
    return makeError(ErrorCode::kParse, "optimised-IR record {} is malformed or of another format",
                     path.string());
  return std::pair<uint64_t, std::string>(static_cast<uint64_t>(*size), digest->str());
}

} // namespace

std::string optimizedIrKey(std::string_view bitcodeDigest, std::span<const std::string> args,
                           std::string_view clangVersion) {
  detail::KeyHasher hasher(fmt::format("mlgo-env optimized-ir v{}", kFormat));
  hasher.add(bitcodeDigest);
  hasher.add(clangVersion);
  for (const std::string& arg : args)
    hasher.add(arg);
  return hasher.finish();
}

Result<OptimizedIrCache> OptimizedIrCache::open(support::CleanupScope& scope,
                                                std::filesystem::path dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return makeError(ErrorCode::kIo, "cannot use optimised-IR cache directory {}: {}", dir.string(),
                     ec ? ec.message() : "not a directory");
  return OptimizedIrCache(scope, std::move(dir));
}

std::filesystem::path OptimizedIrCache::bitcodePath(std::string_view key) const {
  return dir_ / fmt::format("{}.bc", key);
}

Result<OptimizedIrEntry> OptimizedIrCache::load(std::string_view key) const {
  auto record = readRecord(dir_ / fmt::format("{}.json", key));
  if (!record.ok())
    return record.error();
  std::filesystem::path bitcode = bitcodePath(key);
  auto file = detail::digestFile(bitcode);
  if (!file.ok())
    return makeError(ErrorCode::kParse, "optimised-IR entry {}: {}", key, file.error().message());
  if (file->identity.size != record->first || file->digest != record->second)
    return makeError(ErrorCode::kParse,
                     "optimised-IR entry {}: {} has {} bytes and digest {}, its record says {} "
                     "bytes and {}",
                     key, bitcode.string(), file->identity.size, file->digest, record->first,
                     record->second);
  return entryFrom(std::move(bitcode), *file);
}

Result<OptimizedIrEntry> OptimizedIrCache::store(std::string_view key,
                                                 const std::filesystem::path& built,
                                                 std::string_view module) const {
  std::filesystem::path bitcode = bitcodePath(key);
  auto temp = detail::createTemporary(*scope_, dir_, bitcode.filename().string());
  if (!temp.ok())
    return temp.error();
  std::error_code ec;
  std::filesystem::copy_file(built, *temp, std::filesystem::copy_options::overwrite_existing, ec);
  // The digest is of the copy, as it will be renamed: what the record says
  // is what a reader finds.
  auto copied = ec ? Result<detail::FileDigest>(makeError(ErrorCode::kIo, "{}", ec.message()))
                   : detail::digestFile(*temp);
  if (!copied.ok()) {
    detail::discardTemporary(*scope_, *temp);
    return makeError(ErrorCode::kIo, "cannot copy {} into the optimised-IR cache {}: {}",
                     built.string(), dir_.string(), copied.error().message());
  }
  llvm::json::Object object{{"format", kFormat},
                            {"size", static_cast<int64_t>(copied->identity.size)},
                            {"blake3", copied->digest},
                            {"module", std::string(module)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object)) << '\n';
  os.flush();
  std::filesystem::path recordPath = dir_ / fmt::format("{}.json", key);
  auto recordTemp = detail::writeTemporary(*scope_, recordPath, text);
  if (!recordTemp.ok()) {
    detail::discardTemporary(*scope_, *temp);
    return recordTemp.error();
  }
  // The bitcode first: a reader between the two renames sees the new file
  // with an older record, a mismatch only if the bytes differ.
  std::pair<std::filesystem::path, std::filesystem::path> renames[] = {{*temp, bitcode},
                                                                       {*recordTemp, recordPath}};
  MLGO_TRY(detail::commitAll(*scope_, renames));
  return entryFrom(std::move(bitcode), *copied); // A rename keeps the identity.
}

bool OptimizedIrCache::unchanged(const OptimizedIrEntry& entry) {
  auto now = detail::identityOf(entry.bitcode);
  return now.ok() && now->device == entry.device && now->inode == entry.inode &&
         now->size == entry.size && now->mtimeNs == entry.mtimeNs;
}

} // namespace mlgo::env
