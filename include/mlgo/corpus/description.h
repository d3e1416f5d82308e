//===- mlgo/corpus/description.h - corpus_description.json ------*- C++ -*-===//
///
/// \file
/// The manifest of a corpus (mlgo-utils format):
///
///   {
///     "global_command_override": ["-O2", "-c"],   // optional
///     "has_thinlto": false,
///     "modules": ["a.o", "lib/b.o"]
///   }
///
/// Unknown keys are ignored. An override equal to ["<UNSPECIFIED>"] is the
/// placeholder mlgo-utils writes for lld ThinLTO corpora; it is kept as parsed
/// here and rejected by Corpus::open.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_DESCRIPTION_H
#define MLGO_CORPUS_DESCRIPTION_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

inline constexpr std::string_view kDescriptionFileName = "corpus_description.json";
inline constexpr std::string_view kUnspecifiedOverride = "<UNSPECIFIED>";

struct CorpusDescription {
  std::vector<std::string> modules;
  bool hasThinLto = false;
  std::optional<std::vector<std::string>> globalCommandOverride;

  bool operator==(const CorpusDescription&) const = default;
};

/// Parses the JSON text of a description. `source` names it in errors.
/// kParse when the text is not JSON, not an object, `modules` is missing or
/// not an array of strings, `has_thinlto` is present but not a boolean, or
/// `global_command_override` is not an array of strings. (An empty `modules`
/// array parses; Corpus::open rejects it.)
Result<CorpusDescription> parseDescription(std::string_view json, std::string_view source);

/// Reads and parses `<dir>/corpus_description.json` (kNotFound / kIo / kParse).
Result<CorpusDescription> readDescription(const std::filesystem::path& dir);

/// Serialises a description (2-space indented JSON, keys as above).
std::string formatDescription(const CorpusDescription& description);

/// Writes `<dir>/corpus_description.json` atomically (temp file + rename).
Status writeDescription(const std::filesystem::path& dir, const CorpusDescription& description);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_DESCRIPTION_H
