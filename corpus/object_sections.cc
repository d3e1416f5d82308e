//===- corpus/object_sections.cc - section bytes for tests ----------------===//
#include "object_sections.h"

#include "mlgo/corpus/executable_sections.h"

namespace mlgo::corpus::testing {

std::optional<std::map<std::string, std::string>>
executableSections(const std::filesystem::path& object) {
  auto read = readExecutableSections(object);
  if (!read.ok())
    return std::nullopt;
  std::map<std::string, std::string> sections;
  for (ExecutableSection& section : *read)
    sections[section.name].append(section.contents);
  return sections;
}

} // namespace mlgo::corpus::testing
