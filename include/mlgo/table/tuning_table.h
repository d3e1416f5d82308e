//===- mlgo/table/tuning_table.h - the decisions tune found -------*- C++ -*-===//
///
/// \file
/// The one reader of a tuning directory (docs/tuning-format.md is the
/// specification; table_writer.h its one writer, which `python -m
/// mlgo_env.tune` calls through the Python core; `mlgo-env launch` and `tune
/// status` read it here):
///
///     DIR/tuning.json         {"format": "mlgo-env-tuning", "version": 1,
///                              "problem": "inlining", "features": [sorted names],
///                              "clang": {"path", "size", "mtime_ns", "version"},
///                              "modules": N, "profiles": ["", <sha256 hex>...]}
///     DIR/modules/<key>.json  {"format": "mlgo-env-tuning-entries", "version": 1,
///                              "entries": [{"module": "src/a.o", "opt": "-Oz",
///                                           "decisions": 3,
///                                           "actions": "AQAB", "first": <sha256 hex>,
///                                           "stream": <sha256 hex>,
///                                           "default_score": 120.0, "tuned_score": 96.0,
///                                           "profile": "", "sites": "...",
///                                           "priorities": {"questions": 340,
///                                             "functions": {"f": {"12": 16.0}}}}]}
///     DIR/module-index.json   {"format": "mlgo-env-tuning-index", "version": 1,
///                              "modules": [{"module", "opt", "first"}]}
///
/// <key> is entryKey(`first`): its first 16 hex digits; `first` is the
/// SHA-256 of the first observation's identity features (stream_identity.h);
/// `actions` is base64 of one byte per decision, in the order the compiler
/// asks. `profile` is the profile identity of the module's compile
/// (launch/profile_identity.h; "" = none, also when absent, as in tables
/// older than the field); the manifest's `profiles` lists the entries'
/// profile identities, sorted and distinct (absent in older tables:
/// unknown). `sites` (inlining; absent in older tables) is base64 of one
/// 8-byte site key per decision (stream_identity.h), for the stale route
/// (launch/stale_entry.h), which finds a module's entry in the index.
/// `priorities` (regalloc; absent = none) are the module's register
/// priorities, answered on clang's priority channel beside its evictions:
/// the k-th priority question of function `f` gets the `weight` fallback's
/// priority (weight x 1000) times `functions[f][k]` (1 where none is
/// given); `questions` is how many priority questions the compile asked.
/// The launcher must know before the compile that it opens the priority
/// channel, so it finds such an entry in the index, by the object path. The
/// index lists every entry once one has site keys or priorities (so the
/// object path chooses among all the modules of its name), none otherwise.
///
/// Errors are values naming the file (`tuning file 'PATH': ...`): a manifest,
/// entries file or index that is missing, truncated, of another format or
/// version, or inconsistent (a count that disagrees with the actions, a
/// digest that is not 64 hex digits, an entry filed under another key) is
/// kInvalidArgument (kIo when it cannot be read). A key with no file is no
/// error: no entry.
///
/// Immutable after open(); lookups read one small file each. Thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TABLE_TUNING_TABLE_H
#define MLGO_TABLE_TUNING_TABLE_H

#include "mlgo/support/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::table {

inline constexpr std::string_view kManifestFormat = "mlgo-env-tuning";
inline constexpr std::string_view kEntriesFormat = "mlgo-env-tuning-entries";
inline constexpr std::string_view kIndexFormat = "mlgo-env-tuning-index";
/// The format version of all three files.
inline constexpr int64_t kVersion = 1;
inline constexpr std::string_view kManifestFile = "tuning.json";
inline constexpr std::string_view kIndexFile = "module-index.json";

/// Per function (the compiler's context name), per priority question index
/// within it, a multiplier of the fallback priority.
using PriorityMultipliers = std::map<std::string, std::map<uint64_t, double>, std::less<>>;

/// A regalloc entry's register priorities (see the file comment).
struct EntryPriorities {
  uint64_t questions = 0;           ///< Priority questions the tuned compile asked.
  PriorityMultipliers multipliers; ///< Finite, >= 0.

  bool operator==(const EntryPriorities&) const = default;
};

/// One module's tuned decisions.
struct TuningEntry {
  std::string module;
  std::string opt; ///< The optimisation level it was tuned at ("-Oz").
  std::vector<uint8_t> actions;
  std::string first;  ///< SHA-256 hex of the first observation's identity bytes.
  std::string stream; ///< SHA-256 hex of the observations' digests (stream_identity.h).
  double defaultScore = 0;
  double tunedScore = 0;
  /// The profile identity it was tuned with (launch/profile_identity.h); empty = none.
  std::string profile;
  /// One site key per decision (stream_identity.h); empty when the table has
  /// none (older tables, regalloc).
  std::vector<uint64_t> sites;
  /// Regalloc: the priorities answered beside the evictions; none = clang's
  /// own priorities (no priority channel).
  std::optional<EntryPriorities> priorities;

  bool operator==(const TuningEntry&) const = default;
};

/// Whether `text` is a SHA-256 in hex: 64 lower-case hex digits.
bool isDigest(std::string_view text);

/// The question index a step key of an entry's `priorities` names: decimal
/// digits without sign or leading zeros that fit 64 bits; none otherwise.
std::optional<uint64_t> priorityStep(std::string_view text);

/// The entries file stem of entries whose first observation hashes to
/// `first`: its first 16 characters.
std::string entryKey(std::string_view first);

/// Of module names, the indices of those meant for the object at
/// `objectPath`: the names that share the most trailing '/'-separated
/// components with it, and of those, if any, the ones matched whole (`x.o`
/// beats `.libs/x.o` for `-o x.o`). Every index when none shares a component.
std::vector<size_t> closestModules(std::span<const std::string_view> names,
                                   std::string_view objectPath);

/// Of entries sharing a first decision, the one meant for the object at
/// `objectPath` (as the compile names it): those closestModules() keeps. None
/// when what is left would answer differently (the path cannot tell them
/// apart); entries with the same actions and stream are one.
std::optional<TuningEntry> chooseEntry(std::vector<TuningEntry> entries,
                                       std::string_view objectPath);

/// The compiler a table was made with.
struct CompilerStamp {
  std::string path;    ///< Resolved (realpath) executable.
  uint64_t size = 0;   ///< Its size in bytes...
  int64_t mtimeNs = 0; ///< ...and modification time: the cheap check.
  std::string version; ///< First line of `--version`: the check when those differ.
};

struct TuningManifest {
  std::string problem;
  std::vector<std::string> features; ///< Identity features, sorted, distinct.
  CompilerStamp compiler;
  uint64_t modules = 0;
  /// The profile identities of the entries, sorted, distinct ("" = none);
  /// nullopt for a table older than the field (the entries then tell).
  std::optional<std::vector<std::string>> profiles;
};

/// One row of DIR/module-index.json: an entry.
struct IndexRow {
  std::string module;
  std::string opt;
  std::string first;
};

/// Parses a manifest's text; `where` names it in errors.
Result<TuningManifest> parseManifest(std::string_view text, const std::string& where);

/// Parses an entries file's text; `key` is the file's stem (every entry's
/// `first` must start with it); `where` names it in errors.
Result<std::vector<TuningEntry>> parseEntries(std::string_view text, std::string_view key,
                                              const std::string& where);

/// Parses one entry (a JSON object's text, as `tune` keeps it in a module's
/// search state), checked as in an entries file but under no key.
Result<TuningEntry> parseEntry(std::string_view text, const std::string& where);

/// Parses a module index's text; `where` names it in errors.
Result<std::vector<IndexRow>> parseIndex(std::string_view text, const std::string& where);

/// Every entry of DIR/modules/ (files named *.json, in name order, each
/// checked under its stem); none when the folder does not exist.
Result<std::vector<TuningEntry>> readEntries(const std::filesystem::path& dir);

/// The rows of DIR/module-index.json; none when the table has no index.
Result<std::vector<IndexRow>> readIndex(const std::filesystem::path& dir);

class TuningTable {
public:
  /// Reads DIR/tuning.json.
  static Result<TuningTable> open(const std::filesystem::path& dir);

  const TuningManifest& manifest() const { return manifest_; }
  const std::filesystem::path& dir() const { return dir_; }

  /// The entries whose first observation hashes to `firstHex` (64 hex
  /// digits): those of DIR/modules/<key>.json whose `first` equals it.
  Result<std::vector<TuningEntry>> lookup(std::string_view firstHex) const;

private:
  TuningTable(std::filesystem::path dir, TuningManifest manifest)
      : dir_(std::move(dir)), manifest_(std::move(manifest)) {}

  std::filesystem::path dir_;
  TuningManifest manifest_;
};

} // namespace mlgo::table

#endif // MLGO_TABLE_TUNING_TABLE_H
