//===- corpus/object_sections.cc - section bytes for tests ----------------===//
#include "object_sections.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>

namespace mlgo::corpus::testing {

std::optional<std::map<std::string, std::string>>
executableSections(const std::filesystem::path& object) {
  auto binary = llvm::object::ObjectFile::createObjectFile(object.string());
  if (!binary) {
    llvm::consumeError(binary.takeError());
    return std::nullopt;
  }
  std::map<std::string, std::string> sections;
  for (const llvm::object::SectionRef& section : binary->getBinary()->sections()) {
    if (!section.isText())
      continue;
    auto name = section.getName();
    auto contents = section.getContents();
    if (!name || !contents) {
      llvm::consumeError(name.takeError());
      llvm::consumeError(contents.takeError());
      return std::nullopt;
    }
    sections[name->str()].append(contents->data(), contents->size());
  }
  return sections;
}

} // namespace mlgo::corpus::testing
