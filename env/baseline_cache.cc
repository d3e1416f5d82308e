//===- env/baseline_cache.cc - default scores on disk ----------------------===//
#include "mlgo/env/baseline_cache.h"

#include "cache_files.h"
#include "mlgo/support/cleanup_scope.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mlgo::env {
namespace {

constexpr int kFormat = 1;

} // namespace

Result<std::string> fileDigest(const std::filesystem::path& path) {
  auto digest = detail::digestFile(path);
  if (!digest.ok())
    return digest.error();
  return std::move(digest->digest);
}

std::string baselineKey(std::string_view bitcodeDigest, std::span<const std::string> args,
                        std::string_view clangVersion) {
  detail::KeyHasher hasher(fmt::format("mlgo-env baseline v{}", kFormat));
  hasher.add(bitcodeDigest);
  hasher.add(clangVersion);
  for (const std::string& arg : args)
    hasher.add(arg);
  return hasher.finish();
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
  // stray temporary behind.
  std::filesystem::path final = dir_ / fmt::format("{}.json", key);
  auto temp = detail::writeTemporary(*scope_, final, text);
  if (!temp.ok())
    return temp.error();
  std::pair<std::filesystem::path, std::filesystem::path> rename{*temp, final};
  return detail::commitAll(*scope_, {&rename, 1});
}

} // namespace mlgo::env
