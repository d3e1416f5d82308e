//===- corpus/executable_sections.cc - code bytes of an object ------------===//
#include "mlgo/corpus/executable_sections.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <system_error>

namespace mlgo::corpus {

Result<std::vector<ExecutableSection>>
readExecutableSections(const std::filesystem::path& object) {
  auto buffer = llvm::MemoryBuffer::getFile(object.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code ec = buffer.getError();
    ErrorCode code =
        ec == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound : ErrorCode::kIo;
    return makeError(code, "cannot read object file {}: {}", object.string(), ec.message());
  }
  auto file = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!file)
    return makeError(ErrorCode::kParse, "{} is not an object file: {}", object.string(),
                     llvm::toString(file.takeError()));
  std::vector<ExecutableSection> sections;
  for (const llvm::object::SectionRef& section : (*file)->sections()) {
    if (!section.isText())
      continue;
    auto name = section.getName();
    if (!name)
      return makeError(ErrorCode::kParse, "{}: a section's name is malformed: {}",
                       object.string(), llvm::toString(name.takeError()));
    auto contents = section.getContents();
    if (!contents)
      return makeError(ErrorCode::kParse, "{}: section {} is malformed: {}", object.string(),
                       name->str(), llvm::toString(contents.takeError()));
    sections.push_back({name->str(), contents->str()});
  }
  return sections;
}

} // namespace mlgo::corpus
