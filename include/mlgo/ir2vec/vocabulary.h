//===- mlgo/ir2vec/vocabulary.h - IR2Vec vocabulary files -------*- C++ -*-===//
///
/// \file
/// An IR2Vec vocabulary: one seed vector per LLVM IR entity (entities.h), all
/// of the same dimension. The file format is the JSON LLVM 22 reads with
/// `-ir2vec-vocab-path` (clang: `-mllvm -ir2vec-vocab-path=F`; llvm-ir2vec:
/// `--ir2vec-vocab-path=F`):
///
///     {
///       "Opcodes":   {"Ret": [0.12, -0.5, ...], "Br": [...], ...},
///       "Types":     {"FloatTy": [...], ..., "UnknownTy": [...]},
///       "Arguments": {"Function": [...], "Pointer": [...], "Constant": [...],
///                     "Variable": [...], "FCMP_false": [...], ..., "ICMP_sle": [...]}
///     }
///
/// All three sections are required and non-empty; every value is an array of
/// finite numbers; every array has the same length (the dimension, > 0).
/// Like LLVM, an entity the file does not list gets the zero vector and a key
/// LLVM does not know is ignored; both are reported (missingEntities(),
/// unknownKeys()) so callers can warn.
///
/// Vectors are stored unscaled, as in the file. LLVM multiplies each section
/// by its weight when it loads a vocabulary (opcodes 1.0, types 0.5,
/// arguments 0.2 by default); the Embedder does the same.
///
/// A Vocabulary is an immutable value, safe to share between threads.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_VOCABULARY_H
#define MLGO_IR2VEC_VOCABULARY_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::ir2vec {

class Vocabulary {
public:
  /// Parses vocabulary JSON. `origin` (a file name) prefixes error messages.
  /// kParse errors name the problem and where it is, e.g.
  ///   "vocab.json: missing the 'Types' section (LLVM 22 needs 'Opcodes', 'Types' and 'Arguments')"
  ///   "vocab.json: Opcodes.Add has 74 values, but the dimension is 75 (from Opcodes.Ret)"
  ///   "vocab.json: Types.IntegerTy[3] is not a number (found a string)"
  static Result<Vocabulary> parse(std::string_view json, std::string_view origin = "vocabulary");

  /// Reads and parses a file (kNotFound / kIo when it cannot be read).
  static Result<Vocabulary> load(const std::filesystem::path& path);

  /// Builds a complete vocabulary from `entityCount() * dimension` values,
  /// row-major by entity id. kInvalidArgument on a size mismatch, a zero
  /// dimension or a non-finite value.
  static Result<Vocabulary> fromValues(unsigned dimension, std::vector<double> values);

  /// The JSON text: every entity, in LLVM's order, one per line, numbers in
  /// their shortest round-trip form, so parse(toJson()) gives the same
  /// vectors. Missing entities are written as the zero vectors LLVM would
  /// use for them; unknown keys are dropped.
  std::string toJson() const;

  /// Writes toJson() to `path` atomically (temporary file + rename).
  Status save(const std::filesystem::path& path) const;

  unsigned dimension() const { return dimension_; }

  /// The unscaled vector of entity `id` (zeros when missing).
  std::span<const double> vector(size_t id) const {
    return {values_.data() + id * dimension_, dimension_};
  }

  /// Whether the file listed entity `id`.
  bool has(size_t id) const { return present_[id]; }

  /// Entities the file did not list (they embed as zero vectors).
  std::vector<std::string> missingEntities() const;

  /// Keys LLVM 22 ignores, as "Section.key" (e.g. "Types.Add").
  const std::vector<std::string>& unknownKeys() const { return unknownKeys_; }

private:
  Vocabulary() = default;

  unsigned dimension_ = 0;
  std::vector<double> values_;
  std::vector<bool> present_;
  std::vector<std::string> unknownKeys_;
};

/// The vocabulary shipped with mlgo-env (trained on the demo corpus; see
/// ir2vec/vocab/README.md). An absolute path into the source tree.
std::filesystem::path defaultVocabularyPath();

/// The path a vocabulary argument (`--ir2vec-vocab`, `ir2vec_vocab=`) names:
/// `default` is defaultVocabularyPath() (a file really called default is
/// ./default), anything else a path as given.
std::filesystem::path vocabularyArgument(std::string_view value);

/// The clang arguments that switch on the ML inliner's IR2Vec features with
/// vocabulary `path`: `-mllvm -ml-inliner-ir2vec-vocab-file=<path>` (turns on
/// the callee_embedding / caller_embedding features) and
/// `-mllvm -ir2vec-vocab-path=<path>` (the file IR2Vec actually reads). Both
/// are needed; the inliner itself must be enabled separately
/// (`-mllvm -enable-ml-inliner=release ...`).
std::vector<std::string> inlinerVocabularyFlags(const std::filesystem::path& path);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_VOCABULARY_H
