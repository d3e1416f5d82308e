//===- mlgo/corpus/corpus_tools.h - make and combine corpora ----*- C++ -*-===//
///
/// \file
/// `mlgo-env corpus make` and `mlgo-env corpus combine`, with mlgo-utils'
/// semantics (make_corpus.py, combine_training_corpus.py).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_CORPUS_TOOLS_H
#define MLGO_CORPUS_CORPUS_TOOLS_H

#include "mlgo/corpus/description.h"
#include "mlgo/support/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus {

/// Copies every `*.bc` under `inputDir` (recursively) to the same relative
/// place under `outputDir` and writes a description whose modules are those
/// relative paths without `.bc`, with `global_command_override` =
/// `defaultArgs` (there is no `.cmd` to read). Returns the description
/// written. kNotFound if `inputDir` is missing, kNotFound if it holds no
/// `.bc` file, kIo on copy/write failures, kInvalidArgument if `outputDir`
/// is inside `inputDir` or equal to it.
Result<CorpusDescription> makeCorpus(const std::filesystem::path& inputDir,
                                     const std::filesystem::path& outputDir,
                                     const std::vector<std::string>& defaultArgs);

/// Merges the corpora in the immediate subdirectories of `rootDir` that hold
/// a corpus_description.json into `<rootDir>/corpus_description.json`, with
/// module names prefixed by the subdirectory (`sub/module`). Subdirectories
/// are taken in name order. kNotFound if none is found; kParse if the
/// corpora differ in anything but their modules (has_thinlto, override),
/// naming the two directories. Returns the combined description.
Result<CorpusDescription> combineCorpora(const std::filesystem::path& rootDir);

} // namespace mlgo::corpus

#endif // MLGO_CORPUS_CORPUS_TOOLS_H
