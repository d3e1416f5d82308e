//===- mlgo/ir2vec/embedder.h - IR2Vec embeddings of modules ----*- C++ -*-===//
///
/// \file
/// Computes IR2Vec embeddings of bitcode modules with LLVM 22's own IR2Vec
/// library (llvm::ir2vec::Embedder), from a Vocabulary loaded by mlgo-env.
/// The numbers are exactly those of `llvm-ir2vec embeddings` and of clang's
/// ML inliner given the same vocabulary and weights; llvm-ir2vec prints them
/// with two decimals, mlgo-env keeps full double precision.
///
/// How LLVM computes them: the vocabulary's sections are scaled by their
/// weights (opcodes x1.0, types x0.5, arguments and predicates x0.2 by
/// default); an instruction's vector is opcode + type of its result + the sum
/// of its operands' kinds (+ predicate for compares); a block's is the sum of
/// its instructions (debug records excluded); a function's is the sum of the
/// blocks reachable from its entry. Flow-aware embeddings replace an operand
/// defined by an earlier instruction with that instruction's vector.
///
/// The module embedding (moduleVector) is mlgo-env's: the sum of the
/// function vectors of all function definitions.
///
/// An Embedder is immutable; its const methods may run concurrently (each
/// call parses its module in its own LLVMContext).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_EMBEDDER_H
#define MLGO_IR2VEC_EMBEDDER_H

#include "mlgo/ir2vec/vocabulary.h"
#include "mlgo/support/result.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::ir2vec {

enum class EmbeddingLevel { kFunction, kBasicBlock, kInstruction };
enum class EmbeddingKind { kSymbolic, kFlowAware };

/// "func", "bb", "inst" (llvm-ir2vec's --level values).
std::string_view levelName(EmbeddingLevel level);
Result<EmbeddingLevel> parseEmbeddingLevel(std::string_view text);
/// "symbolic", "flow-aware" (llvm-ir2vec's --ir2vec-kind values).
std::string_view kindName(EmbeddingKind kind);
Result<EmbeddingKind> parseEmbeddingKind(std::string_view text);

/// Section weights; the defaults are LLVM's (-ir2vec-opc-weight,
/// -ir2vec-type-weight, -ir2vec-arg-weight).
struct EmbeddingWeights {
  float opcode = 1.0f;
  float type = 0.5f;
  float argument = 0.2f;
};

/// One embedded function, block or instruction.
struct EmbeddingRecord {
  std::string function;
  size_t block = 0;        ///< index of the block in its function (bb, inst levels)
  std::string blockName;   ///< the block's IR name (often empty)
  std::string instruction; ///< the instruction's IR text (inst level)
  std::vector<double> vector;
};

struct ModuleEmbeddings {
  std::string module; ///< the path given
  EmbeddingLevel level = EmbeddingLevel::kFunction;
  unsigned dimension = 0;
  /// Function definitions in module order; within a function, blocks and
  /// instructions in layout order (unreachable blocks included at bb/inst
  /// level, as llvm-ir2vec does).
  std::vector<EmbeddingRecord> records;
};

class Embedder {
public:
  /// Prepares LLVM's numeric vocabulary. kInvalidArgument for a negative or
  /// non-finite weight.
  static Result<Embedder> create(const Vocabulary& vocabulary,
                                 EmbeddingKind kind = EmbeddingKind::kSymbolic,
                                 EmbeddingWeights weights = {});
  Embedder(Embedder&&) noexcept;
  Embedder& operator=(Embedder&&) noexcept;
  ~Embedder();

  unsigned dimension() const;

  /// Embeds every function definition of `module` (bitcode or textual IR) at
  /// `level`, or only `function` when it is not empty (kNotFound when the
  /// module has no definition of that name). kNotFound / kParse for an
  /// unreadable module.
  Result<ModuleEmbeddings> embed(const std::filesystem::path& module, EmbeddingLevel level,
                                 std::string_view function = {}) const;

  /// embed() for many modules on up to `jobs` threads (0 = one per hardware
  /// thread); results in input order. Fails with the error of the first
  /// module (in input order) that fails.
  Result<std::vector<ModuleEmbeddings>> embedAll(const std::vector<std::filesystem::path>& modules,
                                                 EmbeddingLevel level,
                                                 std::string_view function = {},
                                                 unsigned jobs = 0) const;

  /// The sum of the function vectors of all function definitions of
  /// `module` (zeros for a module without definitions).
  Result<std::vector<double>> moduleVector(const std::filesystem::path& module) const;

private:
  struct Impl;
  explicit Embedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The module embedding of `bitcode` (Embedder::moduleVector with LLVM's
/// default weights, symbolic kind). For an environment's `reset` info: load
/// the vocabulary once (Vocabulary::load), and when embedding many modules
/// create one Embedder and reuse it instead of calling this per module.
/// clang must then get the same vocabulary for the inliner's IR2Vec features:
/// see inlinerVocabularyFlags() in vocabulary.h.
Result<std::vector<double>> moduleEmbedding(const std::filesystem::path& bitcode,
                                            const Vocabulary& vocabulary);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_EMBEDDER_H
