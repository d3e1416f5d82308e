//===- ir2vec/inliner_flags.cc - clang flags for the inliner's IR2Vec features ===//
///
/// Apart from vocabulary.cc: env's inlining problem needs only these flags,
/// and a program that links it (mlgo-env-launch) should not pull in LLVM's
/// IR2Vec through the vocabulary's entity table.
///
//===----------------------------------------------------------------------===//
#include "mlgo/ir2vec/vocabulary.h"

namespace mlgo::ir2vec {

std::vector<std::string> inlinerVocabularyFlags(const std::filesystem::path& path) {
  return {"-mllvm", "-ml-inliner-ir2vec-vocab-file=" + path.string(), "-mllvm",
          "-ir2vec-vocab-path=" + path.string()};
}

} // namespace mlgo::ir2vec
