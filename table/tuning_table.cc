//===- table/tuning_table.cc - reading a tuning directory ------------------===//
#include "mlgo/table/tuning_table.h"

#include "entry_priorities.h"

#include "mlgo/protocol/observation_codec.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <cstring>
#include <system_error>

namespace mlgo::table {

bool isDigest(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string entryKey(std::string_view first) {
  return std::string(first.substr(0, 16));
}

namespace {

Error bad(const std::string& where, const std::string& what) {
  return makeError(ErrorCode::kInvalidArgument, "tuning file '{}': {}", where, what);
}

Result<llvm::json::Object> parseObject(std::string_view text, const std::string& where,
                                       std::string_view format) {
  auto value = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    return bad(where, "not JSON: " + llvm::toString(value.takeError()));
  auto* object = value->getAsObject();
  if (!object)
    return bad(where, "not a JSON object");
  auto found = object->getString("format");
  if (!found || *found != llvm::StringRef(format.data(), format.size()))
    return bad(where, fmt::format("its format is not '{}'", format));
  auto version = object->getInteger("version");
  if (!version || *version != kVersion)
    return bad(where, fmt::format("version {}; this reader knows version {}",
                                  version ? std::to_string(*version) : "missing", kVersion));
  return std::move(*object);
}

/// The entry's optional "sites": base64 of one 8-byte site key per decision.
Result<TuningEntry> parseSites(const llvm::json::Object& o, TuningEntry entry,
                               const std::string& where) {
  const llvm::json::Value* sites = o.get("sites");
  if (!sites)
    return entry;
  auto text = sites->getAsString();
  if (!text)
    return bad(where, "entry '" + entry.module + "': sites must be a base64 string");
  auto bytes = protocol::decodeBase64(std::string_view(text->data(), text->size()));
  if (!bytes.ok())
    return bad(where, "entry '" + entry.module + "': sites: " + bytes.error().message());
  if (bytes->size() != entry.actions.size() * sizeof(uint64_t))
    return bad(where, fmt::format("entry '{}': sites holds {} bytes, not 8 per decision",
                                  entry.module, bytes->size()));
  entry.sites.resize(entry.actions.size());
  std::memcpy(entry.sites.data(), bytes->data(), bytes->size());
  return entry;
}

Result<TuningEntry> entryOf(const llvm::json::Value& value, std::string_view key,
                            const std::string& where) {
  const auto* o = value.getAsObject();
  if (!o)
    return bad(where, "an entry is not an object");
  TuningEntry entry;
  auto module = o->getString("module");
  auto opt = o->getString("opt");
  auto decisions = o->getInteger("decisions");
  auto actions = o->getString("actions");
  auto first = o->getString("first");
  auto stream = o->getString("stream");
  auto defaultScore = o->getNumber("default_score");
  auto tunedScore = o->getNumber("tuned_score");
  if (!module || !opt || !decisions || !actions || !first || !stream || !defaultScore ||
      !tunedScore)
    return bad(where, "an entry lacks one of module, opt, decisions, actions, first, stream, "
                      "default_score, tuned_score (or has one of the wrong type)");
  entry.module = module->str();
  entry.opt = opt->str();
  auto bytes = protocol::decodeBase64(std::string_view(actions->data(), actions->size()));
  if (!bytes.ok())
    return bad(where, "entry '" + entry.module + "': actions: " + bytes.error().message());
  entry.actions.reserve(bytes->size());
  for (std::byte b : *bytes)
    entry.actions.push_back(static_cast<uint8_t>(b));
  if (*decisions < 0 || static_cast<uint64_t>(*decisions) != entry.actions.size())
    return bad(where, fmt::format("entry '{}' says {} decisions but holds {} actions", entry.module,
                                  *decisions, entry.actions.size()));
  entry.first = first->str();
  entry.stream = stream->str();
  if (!isDigest(entry.first) || !isDigest(entry.stream))
    return bad(where, "entry '" + entry.module + "': first and stream must be SHA-256 in hex");
  if (!key.empty() && entryKey(entry.first) != key)
    return bad(where, "entry '" + entry.module + "' is filed under another key");
  entry.defaultScore = *defaultScore;
  entry.tunedScore = *tunedScore;
  if (const llvm::json::Value* profile = o->get("profile")) {
    auto text = profile->getAsString();
    if (!text || !(text->empty() || isDigest(*text)))
      return bad(where, "entry '" + entry.module + "': profile must be \"\" or a SHA-256 in hex");
    entry.profile = text->str();
  }
  auto priorities = parsePriorities(*o, entry.module, where);
  if (!priorities.ok())
    return priorities.error();
  entry.priorities = std::move(*priorities);
  return parseSites(*o, std::move(entry), where);
}

/// The file's text (kIo naming it, with the system's reason, when it cannot be read).
Result<std::unique_ptr<llvm::MemoryBuffer>> readText(const std::filesystem::path& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(ErrorCode::kIo, "tuning file '{}': cannot be read: {}", path.string(),
                     buffer.getError().message());
  return std::move(*buffer);
}

/// Whether `path` exists (kIo naming it when that cannot be told).
Result<bool> present(const std::filesystem::path& path) {
  std::error_code ec;
  bool there = std::filesystem::exists(path, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "tuning file '{}': {}", path.string(), ec.message());
  return there;
}

} // namespace

Result<TuningManifest> parseManifest(std::string_view text, const std::string& where) {
  auto object = parseObject(text, where, kManifestFormat);
  if (!object.ok())
    return object.error();
  TuningManifest manifest;
  auto problem = object->getString("problem");
  if (!problem || (*problem != "inlining" && *problem != "regalloc"))
    return bad(where, "'problem' must be \"inlining\" or \"regalloc\"");
  manifest.problem = problem->str();
  const auto* features = object->getArray("features");
  if (!features || features->empty())
    return bad(where, "'features' must be a non-empty list of names");
  for (const auto& f : *features) {
    auto name = f.getAsString();
    if (!name)
      return bad(where, "'features' must hold names");
    if (!manifest.features.empty() && !(manifest.features.back() < name->str()))
      return bad(where, "'features' must be sorted and distinct");
    manifest.features.push_back(name->str());
  }
  const auto* clang = object->getObject("clang");
  if (!clang)
    return bad(where, "no 'clang' object");
  auto path = clang->getString("path");
  auto size = clang->getInteger("size");
  auto mtime = clang->getInteger("mtime_ns");
  auto version = clang->getString("version");
  if (!path || !size || !mtime || !version || *size < 0)
    return bad(where, "'clang' needs path, size (not negative), mtime_ns and version");
  manifest.compiler = {path->str(), static_cast<uint64_t>(*size), *mtime, version->str()};
  auto modules = object->getInteger("modules");
  if (!modules || *modules < 0)
    return bad(where, "'modules' must be a count");
  manifest.modules = static_cast<uint64_t>(*modules);
  if (const llvm::json::Value* profiles = object->get("profiles")) {
    const auto* list = profiles->getAsArray();
    if (!list)
      return bad(where, "'profiles' must be a list");
    std::vector<std::string> known;
    for (const auto& p : *list) {
      auto digest = p.getAsString();
      if (!digest || !(digest->empty() || isDigest(*digest)))
        return bad(where, "'profiles' must hold \"\" or SHA-256 digests in hex");
      if (!known.empty() && !(known.back() < digest->str()))
        return bad(where, "'profiles' must be sorted and distinct");
      known.push_back(digest->str());
    }
    manifest.profiles = std::move(known);
  }
  return manifest;
}

Result<std::vector<TuningEntry>> parseEntries(std::string_view text, std::string_view key,
                                              const std::string& where) {
  auto object = parseObject(text, where, kEntriesFormat);
  if (!object.ok())
    return object.error();
  const auto* entries = object->getArray("entries");
  if (!entries)
    return bad(where, "no 'entries' list");
  std::vector<TuningEntry> out;
  out.reserve(entries->size());
  for (const auto& value : *entries) {
    auto entry = entryOf(value, key, where);
    if (!entry.ok())
      return entry.error();
    out.push_back(std::move(*entry));
  }
  return out;
}

Result<TuningEntry> parseEntry(std::string_view text, const std::string& where) {
  auto value = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    return bad(where, "not JSON: " + llvm::toString(value.takeError()));
  return entryOf(*value, "", where);
}

Result<std::vector<IndexRow>> parseIndex(std::string_view text, const std::string& where) {
  auto object = parseObject(text, where, kIndexFormat);
  if (!object.ok())
    return object.error();
  const auto* rows = object->getArray("modules");
  if (!rows)
    return bad(where, "no 'modules' list");
  std::vector<IndexRow> out;
  for (const auto& row : *rows) {
    const auto* o = row.getAsObject();
    auto module = o ? o->getString("module") : std::nullopt;
    auto opt = o ? o->getString("opt") : std::nullopt;
    auto first = o ? o->getString("first") : std::nullopt;
    if (!module || !opt || !first || !isDigest(*first))
      return bad(where, "a row lacks module, opt or first (a SHA-256 in hex)");
    out.push_back({module->str(), opt->str(), first->str()});
  }
  return out;
}

Result<std::vector<TuningEntry>> readEntries(const std::filesystem::path& dir) {
  std::filesystem::path folder = dir / "modules";
  auto found = present(folder);
  if (!found.ok() || !*found)
    return found.ok() ? Result<std::vector<TuningEntry>>(std::vector<TuningEntry>{})
                      : Result<std::vector<TuningEntry>>(found.error());
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json")
      files.push_back(it->path());
  if (ec)
    return makeError(ErrorCode::kIo, "tuning file '{}': {}", folder.string(), ec.message());
  std::sort(files.begin(), files.end());
  std::vector<TuningEntry> out;
  for (const auto& path : files) {
    auto text = readText(path);
    if (!text.ok())
      return text.error();
    auto entries = parseEntries((*text)->getBuffer(), path.stem().string(), path.string());
    if (!entries.ok())
      return entries.error();
    std::move(entries->begin(), entries->end(), std::back_inserter(out));
  }
  return out;
}

Result<std::vector<IndexRow>> readIndex(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / kIndexFile;
  auto found = present(path);
  if (!found.ok() || !*found)
    return found.ok() ? Result<std::vector<IndexRow>>(std::vector<IndexRow>{})
                      : Result<std::vector<IndexRow>>(found.error());
  auto text = readText(path);
  if (!text.ok())
    return text.error();
  return parseIndex((*text)->getBuffer(), path.string());
}

Result<TuningTable> TuningTable::open(const std::filesystem::path& dir) {
  auto path = dir / kManifestFile;
  auto text = readText(path);
  if (!text.ok())
    return text.error();
  auto manifest = parseManifest((*text)->getBuffer(), path.string());
  if (!manifest.ok())
    return manifest.error();
  return TuningTable(dir, std::move(*manifest));
}

Result<std::vector<TuningEntry>> TuningTable::lookup(std::string_view firstHex) const {
  if (!isDigest(firstHex))
    return makeError(ErrorCode::kInvalidArgument, "not a SHA-256 digest: '{}'", firstHex);
  std::string key = entryKey(firstHex);
  auto path = dir_ / "modules" / (key + ".json");
  auto found = present(path);
  if (!found.ok())
    return found.error();
  if (!*found)
    return std::vector<TuningEntry>{};
  auto text = readText(path);
  if (!text.ok())
    return text.error();
  auto entries = parseEntries((*text)->getBuffer(), key, path.string());
  if (!entries.ok())
    return entries.error();
  std::vector<TuningEntry> matching;
  for (auto& e : *entries)
    if (e.first == firstHex)
      matching.push_back(std::move(e));
  return matching;
}

} // namespace mlgo::table
