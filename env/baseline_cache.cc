//===- env/baseline_cache.cc - default scores on disk ----------------------===//
#include "mlgo/env/baseline_cache.h"

#include "mlgo/support/cleanup_scope.h"

#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace mlgo::env {
namespace {

constexpr int kFormat = 1;

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

void update(llvm::BLAKE3& hasher, std::string_view text) {
  // Length-prefixed, so ("ab","c") and ("a","bc") differ.
  uint64_t size = text.size();
  hasher.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
  hasher.update(llvm::StringRef(text.data(), text.size()));
}

std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  return fmt::format("{}.{}.{:x}", ::getpid(), counter.fetch_add(1), rng());
}

} // namespace

Result<std::string> fileDigest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    bool exists = std::filesystem::exists(path, ec);
    return makeError(exists ? ErrorCode::kIo : ErrorCode::kNotFound, "cannot read {}",
                     path.string());
  }
  llvm::BLAKE3 hasher;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    hasher.update(llvm::StringRef(buffer, static_cast<size_t>(in.gcount())));
  }
  if (in.bad())
    return makeError(ErrorCode::kIo, "error reading {}", path.string());
  auto digest = hasher.final();
  return hex(digest);
}

std::string baselineKey(std::string_view bitcodeDigest, std::span<const std::string> args,
                        std::string_view clangVersion) {
  llvm::BLAKE3 hasher;
  update(hasher, fmt::format("mlgo-env baseline v{}", kFormat));
  update(hasher, bitcodeDigest);
  update(hasher, clangVersion);
  for (const std::string& arg : args)
    update(hasher, arg);
  auto digest = hasher.final();
  return hex(digest);
}

std::filesystem::path BaselineCache::defaultDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/')
    return std::filesystem::path(xdg) / "mlgo-env";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home == '/')
    return std::filesystem::path(home) / ".cache" / "mlgo-env";
  const char* tmp = std::getenv("TMPDIR");
  return std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "mlgo-env-cache";
}

Result<BaselineCache> BaselineCache::open(support::CleanupScope& scope, std::filesystem::path dir) {
  if (dir.empty())
    dir = defaultDir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return makeError(ErrorCode::kIo, "cannot use cache directory {}: {}", dir.string(),
                     ec ? ec.message() : "not a directory");
  return BaselineCache(scope, std::move(dir));
}

std::optional<ModuleScore> BaselineCache::load(std::string_view key) const {
  std::ifstream in(dir_ / fmt::format("{}.json", key), std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  auto value = llvm::json::parse(text.str());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object* object = value->getAsObject();
  if (object == nullptr || object->getInteger("format") != kFormat)
    return std::nullopt;
  auto total = object->getNumber("total");
  const llvm::json::Array* contexts = object->getArray("contexts");
  if (!total || contexts == nullptr)
    return std::nullopt;
  ModuleScore score;
  score.total = *total;
  for (const llvm::json::Value& entry : *contexts) {
    const llvm::json::Array* pair = entry.getAsArray();
    if (pair == nullptr || pair->size() != 2)
      return std::nullopt;
    auto name = (*pair)[0].getAsString();
    auto value2 = (*pair)[1].getAsNumber();
    if (!name || !value2)
      return std::nullopt;
    score.contexts.emplace_back(name->str(), *value2);
  }
  return score;
}

Status BaselineCache::store(std::string_view key, const ModuleScore& score) const {
  llvm::json::Array contexts;
  for (const auto& [name, value] : score.contexts)
    contexts.push_back(llvm::json::Array{name, value});
  llvm::json::Object object{
      {"format", kFormat}, {"total", score.total}, {"contexts", std::move(contexts)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object)) << '\n';
  os.flush();

  // Written to a registered temporary and renamed into place, so neither a
  // failure nor an interruption (cleanup_scope.h) leaves a partial entry or a
  // stray temporary behind. The file is made (exclusively) while it is
  // registered, then filled.
  auto temp = scope_->createPath([&]() -> Result<std::filesystem::path> {
    std::filesystem::path candidate =
        dir_ / fmt::format(".{}.json.tmp.{}", key, uniqueSuffix());
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
      return makeError(ErrorCode::kIo, "cannot create cache entry {}: {}", candidate.string(),
                       std::strerror(errno));
    ::close(fd);
    return candidate;
  });
  if (!temp.ok())
    return temp.error();
  auto discard = [&] {
    std::error_code ignored;
    std::filesystem::remove(*temp, ignored);
    scope_->removePath(*temp);
  };
  {
    std::ofstream out(*temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      discard();
      return makeError(ErrorCode::kIo, "cannot write cache entry {}", temp->string());
    }
  }
  std::filesystem::path final = dir_ / fmt::format("{}.json", key);
  std::pair<std::filesystem::path, std::filesystem::path> rename{*temp, final};
  if (Status committed = scope_->commitPaths({&rename, 1}); !committed.ok()) {
    discard();
    return committed;
  }
  return Status::success();
}

} // namespace mlgo::env
