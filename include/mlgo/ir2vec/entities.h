//===- mlgo/ir2vec/entities.h - LLVM 22's IR2Vec entity table ----*- C++ -*-===//
///
/// \file
/// The entities an IR2Vec vocabulary gives a vector to, exactly as LLVM 22
/// names and orders them (`llvm-ir2vec entities` prints the same list):
///
///   ids   0..67   opcodes           "Ret", "Br", ..., "PtrToAddr", ..., "Freeze"
///   ids  68..79   canonical types   "FloatTy", "VoidTy", ..., "UnknownTy"
///   ids  80..83   operand kinds     "Function", "Pointer", "Constant", "Variable"
///   ids  84..109  cmp predicates    "FCMP_false", ..., "FCMP_true", "ICMP_eq", ..., "ICMP_sle"
///
/// (The counts are LLVM 22's and are read from LLVM, not hard-coded.)
///
/// In the vocabulary JSON file the entities live in three sections: opcodes
/// under "Opcodes", types under "Types", and operand kinds *and* predicates
/// under "Arguments".
///
/// The table is built once from LLVM's own `ir2vec::Vocabulary` on first use;
/// all functions are thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_ENTITIES_H
#define MLGO_IR2VEC_ENTITIES_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::ir2vec {

/// A section of LLVM's vocabulary JSON file.
enum class Section : uint8_t { kOpcodes, kTypes, kArguments };

inline constexpr Section kAllSections[] = {Section::kOpcodes, Section::kTypes, Section::kArguments};

/// The JSON key of a section: "Opcodes", "Types" or "Arguments".
std::string_view sectionKey(Section section);

/// Every entity name in LLVM's vocabulary order (index = entity id).
const std::vector<std::string>& entityNames();

/// Number of entities (110 in LLVM 22).
size_t entityCount();

/// The section entity `id` is stored under. Precondition: id < entityCount().
Section entitySection(size_t id);

/// The id of the entity called `name` in `section`; nullopt when LLVM has no
/// such entity there.
std::optional<size_t> findEntity(Section section, std::string_view name);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_ENTITIES_H
