//===- ir2vec/embedder.cc - IR2Vec embeddings of modules ------------------===//
#include "mlgo/ir2vec/embedder.h"

#include "ir_module.h"
#include "parallel.h"

#include "mlgo/ir2vec/entities.h"

#include <llvm/Analysis/IR2Vec.h>
#include <llvm/IR/Function.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace mlgo::ir2vec {
namespace {

using LlvmVocabulary = llvm::ir2vec::Vocabulary;

/// LLVM's storage sections, in LLVM's entity order, with the weight that
/// scales each (predicates live in the Arguments section of the file and
/// share its weight).
std::vector<std::vector<llvm::ir2vec::Embedding>> scaledSections(const Vocabulary& vocabulary,
                                                                 const EmbeddingWeights& weights) {
  const size_t sizes[] = {LlvmVocabulary::MaxOpcodes, LlvmVocabulary::MaxCanonicalTypeIDs,
                          LlvmVocabulary::MaxOperandKinds, LlvmVocabulary::MaxPredicateKinds};
  // LLVM multiplies by the float option converted to double.
  const double scale[] = {static_cast<double>(weights.opcode), static_cast<double>(weights.type),
                          static_cast<double>(weights.argument),
                          static_cast<double>(weights.argument)};
  std::vector<std::vector<llvm::ir2vec::Embedding>> sections(4);
  size_t id = 0;
  for (size_t s = 0; s < 4; ++s) {
    for (size_t i = 0; i < sizes[s]; ++i, ++id) {
      std::span<const double> row = vocabulary.vector(id);
      std::vector<double> scaled(row.begin(), row.end());
      for (double& x : scaled)
        x *= scale[s];
      sections[s].emplace_back(std::move(scaled));
    }
  }
  return sections;
}

llvm::IR2VecKind llvmKind(EmbeddingKind kind) {
  return kind == EmbeddingKind::kFlowAware ? llvm::IR2VecKind::FlowAware
                                           : llvm::IR2VecKind::Symbolic;
}

std::vector<double> toVector(const llvm::ir2vec::Embedding& embedding) {
  return embedding.getData();
}

std::string instructionText(const llvm::Instruction& inst) {
  std::string text;
  llvm::raw_string_ostream out(text);
  inst.print(out);
  out.flush();
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : text.substr(start);
}

} // namespace

struct Embedder::Impl {
  LlvmVocabulary vocabulary;
  EmbeddingKind kind;

  void embedFunction(const llvm::Function& function, EmbeddingLevel level,
                     std::vector<EmbeddingRecord>& out) const {
    std::unique_ptr<llvm::ir2vec::Embedder> embedder =
        llvm::ir2vec::Embedder::create(llvmKind(kind), function, vocabulary);
    std::string name = function.getName().str();
    if (level == EmbeddingLevel::kFunction) {
      out.push_back({name, 0, {}, {}, toVector(embedder->getFunctionVector())});
      return;
    }
    size_t index = 0;
    for (const llvm::BasicBlock& block : function) {
      std::string blockName = block.getName().str();
      if (level == EmbeddingLevel::kBasicBlock) {
        out.push_back({name, index, blockName, {}, toVector(embedder->getBBVector(block))});
      } else {
        for (const llvm::Instruction& inst : block)
          out.push_back({name, index, blockName, instructionText(inst),
                         toVector(embedder->getInstVector(inst))});
      }
      ++index;
    }
  }
};

Embedder::Embedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Embedder::Embedder(Embedder&&) noexcept = default;
Embedder& Embedder::operator=(Embedder&&) noexcept = default;
Embedder::~Embedder() = default;

Result<Embedder> Embedder::create(const Vocabulary& vocabulary, EmbeddingKind kind,
                                  EmbeddingWeights weights) {
  for (float w : {weights.opcode, weights.type, weights.argument})
    if (!std::isfinite(w) || w < 0)
      return makeError(ErrorCode::kInvalidArgument,
                       "IR2Vec weights must be finite and non-negative (got {})", w);
  auto impl = std::make_unique<Impl>(
      Impl{LlvmVocabulary(llvm::ir2vec::VocabStorage(scaledSections(vocabulary, weights))), kind});
  if (!impl->vocabulary.isValid())
    return makeError(ErrorCode::kInternal, "LLVM rejected the vocabulary layout ({} entities)",
                     entityCount());
  return Embedder(std::move(impl));
}

unsigned Embedder::dimension() const {
  return impl_->vocabulary.getDimension();
}

Result<ModuleEmbeddings> Embedder::embed(const std::filesystem::path& path, EmbeddingLevel level,
                                         std::string_view function) const {
  llvm::LLVMContext context;
  Result<std::unique_ptr<llvm::Module>> module = detail::loadModule(path, context);
  if (!module)
    return std::move(module).error();
  ModuleEmbeddings result;
  result.module = path.string();
  result.level = level;
  result.dimension = dimension();
  if (!function.empty()) {
    const llvm::Function* only =
        (*module)->getFunction(llvm::StringRef(function.data(), function.size()));
    if (!only || only->isDeclaration())
      return makeError(ErrorCode::kNotFound, "{}: no definition of function '{}'", path.string(),
                       function);
    impl_->embedFunction(*only, level, result.records);
    return result;
  }
  for (const llvm::Function& f : (*module)->getFunctionDefs())
    impl_->embedFunction(f, level, result.records);
  return result;
}

Result<std::vector<ModuleEmbeddings>>
Embedder::embedAll(const std::vector<std::filesystem::path>& modules, EmbeddingLevel level,
                   std::string_view function, unsigned jobs) const {
  std::vector<ModuleEmbeddings> results(modules.size());
  Status status = detail::parallelFor(modules.size(), jobs, [&](size_t i) -> Status {
    Result<ModuleEmbeddings> one = embed(modules[i], level, function);
    if (!one)
      return std::move(one).error();
    results[i] = std::move(*one);
    return Status::success();
  });
  if (!status)
    return status.error();
  return results;
}

Result<std::vector<double>> Embedder::moduleVector(const std::filesystem::path& path) const {
  llvm::LLVMContext context;
  Result<std::unique_ptr<llvm::Module>> module = detail::loadModule(path, context);
  if (!module)
    return std::move(module).error();
  llvm::ir2vec::Embedding sum(dimension(), 0.0);
  for (const llvm::Function& f : (*module)->getFunctionDefs())
    sum += llvm::ir2vec::Embedder::create(llvmKind(impl_->kind), f, impl_->vocabulary)
               ->getFunctionVector();
  return toVector(sum);
}

Result<std::vector<double>> moduleEmbedding(const std::filesystem::path& bitcode,
                                            const Vocabulary& vocabulary) {
  Result<Embedder> embedder = Embedder::create(vocabulary);
  if (!embedder)
    return std::move(embedder).error();
  return embedder->moduleVector(bitcode);
}

std::string_view levelName(EmbeddingLevel level) {
  switch (level) {
  case EmbeddingLevel::kFunction:
    return "func";
  case EmbeddingLevel::kBasicBlock:
    return "bb";
  case EmbeddingLevel::kInstruction:
    return "inst";
  }
  return "?";
}

Result<EmbeddingLevel> parseEmbeddingLevel(std::string_view text) {
  for (EmbeddingLevel level :
       {EmbeddingLevel::kFunction, EmbeddingLevel::kBasicBlock, EmbeddingLevel::kInstruction})
    if (levelName(level) == text)
      return level;
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown embedding level '{}' (expected func, bb or inst)", text);
}

std::string_view kindName(EmbeddingKind kind) {
  return kind == EmbeddingKind::kFlowAware ? "flow-aware" : "symbolic";
}

Result<EmbeddingKind> parseEmbeddingKind(std::string_view text) {
  for (EmbeddingKind kind : {EmbeddingKind::kSymbolic, EmbeddingKind::kFlowAware})
    if (kindName(kind) == text)
      return kind;
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown embedding kind '{}' (expected symbolic or flow-aware)", text);
}

} // namespace mlgo::ir2vec
