//===- ir2vec/entities.cc - LLVM 22's IR2Vec entity table -----------------===//
#include "mlgo/ir2vec/entities.h"

#include <llvm/Analysis/IR2Vec.h>

#include <cassert>
#include <unordered_map>

namespace mlgo::ir2vec {
namespace {

using LlvmVocabulary = llvm::ir2vec::Vocabulary;

// First id of each section (Opcodes start at 0).
constexpr size_t kFirstType = LlvmVocabulary::MaxOpcodes;
constexpr size_t kFirstArgument = kFirstType + LlvmVocabulary::MaxCanonicalTypeIDs;

struct Table {
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> byKey[3]; // per section
};

const Table& table() {
  static const Table kTable = [] {
    Table t;
    size_t count = LlvmVocabulary::getCanonicalSize();
    t.names.reserve(count);
    for (size_t id = 0; id < count; ++id) {
      // getStringKey may return a view of a static buffer: copy at once.
      t.names.push_back(LlvmVocabulary::getStringKey(static_cast<unsigned>(id)).str());
      t.byKey[static_cast<size_t>(entitySection(id))].emplace(t.names.back(), id);
    }
    return t;
  }();
  return kTable;
}

} // namespace

std::string_view sectionKey(Section section) {
  switch (section) {
  case Section::kOpcodes:
    return "Opcodes";
  case Section::kTypes:
    return "Types";
  case Section::kArguments:
    return "Arguments";
  }
  return "?";
}

const std::vector<std::string>& entityNames() {
  return table().names;
}

size_t entityCount() {
  return LlvmVocabulary::getCanonicalSize();
}

Section entitySection(size_t id) {
  assert(id < entityCount());
  if (id < kFirstType)
    return Section::kOpcodes;
  if (id < kFirstArgument)
    return Section::kTypes;
  return Section::kArguments;
}

std::optional<size_t> findEntity(Section section, std::string_view name) {
  const auto& map = table().byKey[static_cast<size_t>(section)];
  auto it = map.find(std::string(name));
  if (it == map.end())
    return std::nullopt;
  return it->second;
}

} // namespace mlgo::ir2vec
