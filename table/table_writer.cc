//===- table/table_writer.cc - writing a tuning directory -------------------===//
#include "mlgo/table/table_writer.h"

#include "entry_priorities.h"
#include "json_writing.h"

#include "mlgo/protocol/observation_codec.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

namespace mlgo::table {
namespace {

Error refused(const std::string& what) {
  return makeError(ErrorCode::kInvalidArgument, "{}", what);
}

/// Appends `"key": "text"` (after ", " unless first); false when not UTF-8.
bool appendMember(std::string& out, std::string_view key, std::string_view text,
                  bool first = false) {
  out += first ? "\"" : ", \"";
  out += key;
  out += "\": ";
  return appendQuoted(out, text);
}

std::string base64(const void* data, size_t size) {
  std::string out;
  protocol::appendBase64(out, {static_cast<const std::byte*>(data), size});
  return out;
}

/// What the reader would refuse in `e`, or a score JSON cannot hold.
Status checkEntry(const TuningEntry& e) {
  std::string name = "entry '" + e.module + "': ";
  if (!isDigest(e.first) || !isDigest(e.stream))
    return refused(name + "first and stream must be SHA-256 in hex");
  if (!e.profile.empty() && !isDigest(e.profile))
    return refused(name + "profile must be \"\" or a SHA-256 in hex");
  if (!e.sites.empty() && e.sites.size() != e.actions.size())
    return refused(
        fmt::format("{}{} site keys for {} decisions", name, e.sites.size(), e.actions.size()));
  if (!std::isfinite(e.defaultScore) || !std::isfinite(e.tunedScore))
    return refused(name + "a score is not a finite number");
  if (e.priorities)
    return checkPriorities(*e.priorities, name + "priorities: ");
  return Status::success();
}

Status checkContents(const TableContents& c) {
  if (c.problem != "inlining" && c.problem != "regalloc")
    return refused("no tuning table for problem '" + c.problem + "'");
  if (c.features.empty() || !std::is_sorted(c.features.begin(), c.features.end()) ||
      std::adjacent_find(c.features.begin(), c.features.end()) != c.features.end())
    return refused("'features' must be a non-empty list of names, sorted and distinct");
  for (const TuningEntry& e : c.entries) {
    Status checked = checkEntry(e);
    if (!checked.ok())
      return checked;
  }
  return Status::success();
}

std::string notText(std::string_view what) {
  return fmt::format("{} is not UTF-8 text", what);
}

/// `items` as an indented list of strings at depth 1 (json.dumps(indent=1)).
bool appendIndentedList(std::string& out, const std::vector<std::string>& items) {
  if (items.empty()) {
    out += "[]";
    return true;
  }
  out += "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += i ? ",\n  " : "\n  ";
    if (!appendQuoted(out, items[i]))
      return false;
  }
  out += "\n ]";
  return true;
}

Result<std::string> manifestText(const TableContents& c, const std::vector<std::string>& profiles) {
  std::string out = "{\n \"format\": \"" + std::string(kManifestFormat) +
                    "\",\n \"version\": " + std::to_string(kVersion) + ",\n \"problem\": \"" +
                    c.problem + "\",\n \"features\": ";
  if (!appendIndentedList(out, c.features))
    return refused(notText("a feature name"));
  out += ",\n \"clang\": {\n  \"path\": ";
  bool text = appendQuoted(out, c.compiler.path);
  out += fmt::format(",\n  \"size\": {},\n  \"mtime_ns\": {},\n  \"version\": ", c.compiler.size,
                     c.compiler.mtimeNs);
  if (!text || !appendQuoted(out, c.compiler.version))
    return refused(notText("the compiler's path or version"));
  out += fmt::format("\n }},\n \"modules\": {},\n \"profiles\": ", c.entries.size());
  appendIndentedList(out, profiles); // digests: checked
  return out + "\n}\n";
}

/// The index of `rows`, sorted by module (rows of one module in the order given).
std::string indexText(std::vector<const TuningEntry*> given) {
  std::vector<std::pair<const TuningEntry*, size_t>> sorted;
  for (size_t i = 0; i < given.size(); ++i)
    sorted.emplace_back(given[i], i);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->module, a.second) < std::tie(b.first->module, b.second);
  });
  std::vector<const TuningEntry*> rows;
  for (const auto& [row, i] : sorted)
    rows.push_back(row);
  std::string out = "{\"format\": \"" + std::string(kIndexFormat) +
                    "\", \"version\": " + std::to_string(kVersion) + ", \"modules\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += i ? ", {" : "{";
    appendMember(out, "module", rows[i]->module, true); // checked by entryText()
    appendMember(out, "opt", rows[i]->opt);
    appendMember(out, "first", rows[i]->first);
    out += "}";
  }
  return out + "]}\n";
}

/// Writes `text` to `path` atomically (see the header).
Status writeFile(const std::filesystem::path& path, const std::string& text) {
  llvm::Error error = llvm::writeToOutput(path.string(), [&](llvm::raw_ostream& out) {
    out << text;
    return llvm::Error::success();
  });
  if (error)
    return makeError(ErrorCode::kIo, "tuning file '{}': cannot be written: {}", path.string(),
                     llvm::toString(std::move(error)));
  return Status::success();
}

/// Removes `path` if it exists.
Status removeFile(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "tuning file '{}': cannot be removed: {}", path.string(),
                     ec.message());
  return Status::success();
}

/// Removes the entries files of DIR/modules/ whose stem is no key of `files`.
Status removeUnneeded(const std::filesystem::path& folder,
                      const std::map<std::string, std::string>& files) {
  std::vector<std::filesystem::path> unneeded;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json" && !files.count(it->path().stem().string()))
      unneeded.push_back(it->path());
  if (ec)
    return makeError(ErrorCode::kIo, "tuning file '{}': {}", folder.string(), ec.message());
  for (const auto& path : unneeded)
    if (Status removed = removeFile(path); !removed.ok())
      return removed;
  return Status::success();
}

} // namespace

Result<std::string> entryText(const TuningEntry& e) {
  if (Status checked = checkEntry(e); !checked.ok())
    return checked.error();
  std::string out = "{";
  if (!appendMember(out, "module", e.module, true) || !appendMember(out, "opt", e.opt))
    return refused(notText("entry '" + e.module + "': its module or opt"));
  out += fmt::format(", \"decisions\": {}", e.actions.size());
  appendMember(out, "actions", base64(e.actions.data(), e.actions.size()));
  appendMember(out, "first", e.first);
  appendMember(out, "stream", e.stream);
  out += ", \"default_score\": " + floatText(e.defaultScore) +
         ", \"tuned_score\": " + floatText(e.tunedScore);
  appendMember(out, "profile", e.profile);
  if (!e.sites.empty())
    appendMember(out, "sites", base64(e.sites.data(), e.sites.size() * sizeof(uint64_t)));
  if (e.priorities && !appendPriorities(out, *e.priorities))
    return refused(notText("entry '" + e.module + "': a function name of its priorities"));
  return out + "}";
}

Result<size_t> writeTable(const std::filesystem::path& dir, TableContents c) {
  if (Status checked = checkContents(c); !checked.ok())
    return checked.error();
  // Each file's entries, by key: sorted by module, the input's order otherwise.
  std::map<std::string, std::vector<const TuningEntry*>> byKey;
  std::vector<std::string> order; // keys by first appearance (the index's tie order)
  for (const TuningEntry& e : c.entries) {
    auto& group = byKey[entryKey(e.first)];
    if (group.empty())
      order.push_back(entryKey(e.first));
    group.push_back(&e);
  }
  std::map<std::string, std::string> files;
  std::vector<const TuningEntry*> indexed;
  std::set<std::string> profiles;
  for (const std::string& key : order) {
    auto& group = byKey[key];
    // Pointers into c.entries: their order is the input's.
    std::sort(group.begin(), group.end(), [](const TuningEntry* a, const TuningEntry* b) {
      return std::tie(a->module, a) < std::tie(b->module, b);
    });
    std::string text = "{\"format\": \"" + std::string(kEntriesFormat) +
                       "\", \"version\": " + std::to_string(kVersion) + ", \"entries\": [";
    for (const TuningEntry* e : group) {
      auto entry = entryText(*e);
      if (!entry.ok())
        return entry.error();
      text += (e == group.front() ? "" : ", ") + *entry;
      indexed.push_back(e);
      profiles.insert(e->profile);
    }
    files[key] = text + "]}\n";
  }
  auto manifest = manifestText(c, {profiles.begin(), profiles.end()});
  if (!manifest.ok())
    return manifest.error();
  std::filesystem::path folder = dir / "modules";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "tuning table '{}': cannot be made: {}", dir.string(),
                     ec.message());
  for (const auto& [key, text] : files)
    if (Status written = writeFile(folder / (key + ".json"), text); !written.ok())
      return written.error();
  if (Status removed = removeUnneeded(folder, files); !removed.ok())
    return removed.error();
  // Every entry is indexed once one needs the index (site keys, priorities):
  // the object path then chooses among all the modules of its name.
  bool needed = std::any_of(c.entries.begin(), c.entries.end(), [](const TuningEntry& e) {
    return !e.sites.empty() || e.priorities.has_value();
  });
  Status index = needed ? writeFile(dir / kIndexFile, indexText(indexed))
                        : removeFile(dir / kIndexFile);
  if (!index.ok())
    return index.error();
  if (Status written = writeFile(dir / kManifestFile, *manifest); !written.ok())
    return written.error();
  return c.entries.size();
}

} // namespace mlgo::table
