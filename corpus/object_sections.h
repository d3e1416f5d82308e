//===- corpus/object_sections.h - section bytes for tests -------*- C++ -*-===//
///
/// \file
/// Test helper: the bytes of an object file's executable sections by name
/// (mlgo/corpus/executable_sections.h's reader, as a map).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_CORPUS_OBJECT_SECTIONS_H
#define MLGO_CORPUS_OBJECT_SECTIONS_H

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace mlgo::corpus::testing {

/// Executable sections of `object` by name (a name seen twice gets its
/// contents concatenated). nullopt if the file is not a readable object.
std::optional<std::map<std::string, std::string>>
executableSections(const std::filesystem::path& object);

} // namespace mlgo::corpus::testing

#endif // MLGO_CORPUS_OBJECT_SECTIONS_H
