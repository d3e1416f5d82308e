//===- corpus/embedded_module.cc - reading .llvmbc/.llvmcmd in-process ----===//
#include "mlgo/corpus/extract.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <system_error>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

bool isBitcodeSection(llvm::StringRef name) {
  return name == ".llvmbc" || name == "__bitcode"; // ELF/COFF, Mach-O
}
bool isCommandSection(llvm::StringRef name) {
  return name == ".llvmcmd" || name == "__cmdline";
}

/// Whether NUL-separated `command` contains the argument `flag`.
bool hasArgument(std::string_view command, std::string_view flag) {
  std::size_t start = 0;
  while (start < command.size()) {
    std::size_t end = command.find('\0', start);
    if (end == std::string_view::npos)
      end = command.size();
    if (command.substr(start, end - start) == flag)
      return true;
    start = end + 1;
  }
  return false;
}

Error problemError(ObjectProblem* out, ObjectProblem problem, Error error) {
  if (out)
    *out = problem;
  return error;
}

/// Checks the contents of the two sections; returns the problem, if any.
std::optional<Error> checkSections(const fs::path& object, const EmbeddedModule& module,
                                   ObjectProblem* problem) {
  if (module.bitcode.empty())
    return problemError(problem, ObjectProblem::kMarkerOnly,
                        makeError(ErrorCode::kParse,
                                  "'{}': the .llvmbc section is empty (built with "
                                  "-fembed-bitcode=marker); rebuild with "
                                  "-Xclang -fembed-bitcode=all",
                                  object.string()));
  if (hasArgument(module.command, "-disable-llvm-passes"))
    return problemError(
        problem, ObjectProblem::kPostOptimisation,
        makeError(ErrorCode::kUnsupported,
                  "'{}' was built with the driver-level -fembed-bitcode=all: its embedded IR "
                  "is the output of the optimisation pipeline (the embedded command is the "
                  "backend step's, with -disable-llvm-passes), useless for training; rebuild "
                  "with -Xclang -fembed-bitcode=all to embed the IR before optimisation",
                  object.string()));
  if (!module.command.starts_with(std::string_view("-cc1\0", 5)) && module.command != "-cc1")
    return problemError(problem, ObjectProblem::kBadCommand,
                        makeError(ErrorCode::kParse,
                                  "'{}': the .llvmcmd section does not start with -cc1",
                                  object.string()));
  return std::nullopt;
}

} // namespace

Result<EmbeddedModule> readEmbeddedModule(const fs::path& object, ObjectProblem* problem) {
  std::error_code ec;
  if (!fs::exists(object, ec))
    return problemError(
        problem, ObjectProblem::kMissing,
        makeError(ErrorCode::kNotFound, "object file '{}' does not exist", object.string()));
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(
      object.string(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return problemError(problem, ObjectProblem::kUnreadable,
                        makeError(ErrorCode::kIo, "cannot read object file '{}': {}",
                                  object.string(), buffer.getError().message()));

  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!file)
    return problemError(problem, ObjectProblem::kNotAnObject,
                        makeError(ErrorCode::kParse, "'{}' is not an object file: {}",
                                  object.string(), llvm::toString(file.takeError())));

  EmbeddedModule module;
  bool sawBitcode = false;
  bool sawCommand = false;
  for (const llvm::object::SectionRef& section : (*file)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    bool bitcode = isBitcodeSection(*name);
    if (!bitcode && !isCommandSection(*name))
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return problemError(problem, ObjectProblem::kNotAnObject,
                          makeError(ErrorCode::kParse, "'{}': cannot read section {}: {}",
                                    object.string(), name->str(),
                                    llvm::toString(contents.takeError())));
    (bitcode ? module.bitcode : module.command).assign(contents->data(), contents->size());
    (bitcode ? sawBitcode : sawCommand) = true;
  }
  if (!sawBitcode || !sawCommand)
    return problemError(problem, ObjectProblem::kNoEmbeddedBitcode,
                        makeError(ErrorCode::kNotFound,
                                  "'{}' has no embedded bitcode (no {} section); compile it with "
                                  "-Xclang -fembed-bitcode=all",
                                  object.string(), sawBitcode ? ".llvmcmd" : ".llvmbc"));
  if (std::optional<Error> error = checkSections(object, module, problem))
    return std::move(*error);
  return module;
}

std::string_view objectProblemName(ObjectProblem problem) {
  switch (problem) {
  case ObjectProblem::kMissing:
    return "missing";
  case ObjectProblem::kUnreadable:
    return "unreadable";
  case ObjectProblem::kNotAnObject:
    return "not an object file";
  case ObjectProblem::kNoEmbeddedBitcode:
    return "no embedded bitcode";
  case ObjectProblem::kMarkerOnly:
    return "bitcode marker only";
  case ObjectProblem::kPostOptimisation:
    return "post-optimisation bitcode (driver-level -fembed-bitcode=all)";
  case ObjectProblem::kBadCommand:
    return "command without -cc1";
  case ObjectProblem::kFilteredOut:
    return "filtered out by --cmd_filter";
  case ObjectProblem::kDuplicate:
    return "duplicate module name";
  case ObjectProblem::kBadName:
    return "object path outside the base directory";
  case ObjectProblem::kNoOutputInCommand:
    return "not a compile to an object file";
  case ObjectProblem::kBadResponseFile:
    return "unreadable response file";
  case ObjectProblem::kNoThinLtoBitcode:
    return "no ThinLTO post-import bitcode (.3.import.bc)";
  case ObjectProblem::kNoThinLtoIndex:
    return "no ThinLTO index (.thinlto.bc)";
  case ObjectProblem::kWriteFailed:
    return "write failed";
  }
  return "unknown";
}

} // namespace mlgo::corpus
