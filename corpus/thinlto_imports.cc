//===- corpus/thinlto_imports.cc - what a ThinLTO module imported ---------===//
#include "thinlto_imports.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ModuleSummaryIndex.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <optional>
#include <set>
#include <string>

namespace mlgo::corpus::detail {

namespace fs = std::filesystem;

namespace {

Result<std::unique_ptr<llvm::MemoryBuffer>> readBuffer(const fs::path& path,
                                                       std::string_view what) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(ErrorCode::kIo, "cannot read {} '{}': {}", what, path.string(),
                     buffer.getError().message());
  return std::move(*buffer);
}

/// The index paths that summarise `guid` (empty when the index lacks it).
std::set<std::string> pathsOf(const llvm::ModuleSummaryIndex& index, llvm::GlobalValue::GUID guid) {
  std::set<std::string> paths;
  if (llvm::ValueInfo info = index.getValueInfo(guid))
    for (const auto& summary : info.getSummaryList())
      paths.insert(summary->modulePath().str());
  return paths;
}

/// The paths that summarise every definition of `module` the index knows
/// (nullopt: the index knows none of them). A definition keeps the GUID of
/// its name as it was compiled: external names as they are, locals (also
/// those the link internalised) with their source file.
std::optional<std::set<std::string>> ownPaths(const llvm::Module& module,
                                              const llvm::ModuleSummaryIndex& index) {
  std::optional<std::set<std::string>> own;
  for (const llvm::Function& function : module) {
    if (function.isDeclaration() || function.hasAvailableExternallyLinkage())
      continue;
    std::set<std::string> paths =
        pathsOf(index, llvm::GlobalValue::getGUIDAssumingExternalLinkage(function.getName()));
    if (paths.empty())
      paths = pathsOf(
          index,
          llvm::GlobalValue::getGUIDAssumingExternalLinkage(llvm::GlobalValue::getGlobalIdentifier(
              function.getName(), llvm::GlobalValue::InternalLinkage, module.getSourceFileName())));
    if (paths.empty())
      continue; // e.g. a local the link promoted (renamed `.llvm.<hash>`)
    if (!own) {
      own = std::move(paths);
      continue;
    }
    std::erase_if(*own, [&](const std::string& path) { return !paths.contains(path); });
  }
  return own;
}

} // namespace

Result<std::size_t> countImportedFunctions(const fs::path& bitcode, const fs::path& index) {
  Result<std::unique_ptr<llvm::MemoryBuffer>> indexBuffer = readBuffer(index, "ThinLTO index");
  MLGO_TRY(indexBuffer);
  llvm::Expected<std::unique_ptr<llvm::ModuleSummaryIndex>> summaries =
      llvm::getModuleSummaryIndex((*indexBuffer)->getMemBufferRef());
  if (!summaries)
    return makeError(ErrorCode::kParse, "ThinLTO index '{}' is not a summary index: {}",
                     index.string(), llvm::toString(summaries.takeError()));
  Result<std::unique_ptr<llvm::MemoryBuffer>> moduleBuffer = readBuffer(bitcode, "bitcode");
  MLGO_TRY(moduleBuffer);
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::getLazyBitcodeModule((*moduleBuffer)->getMemBufferRef(), context);
  if (!module)
    return makeError(ErrorCode::kParse, "'{}' is not a bitcode module: {}", bitcode.string(),
                     llvm::toString(module.takeError()));
  std::optional<std::set<std::string>> own = ownPaths(**module, **summaries);
  if (own && own->empty())
    return makeError(ErrorCode::kParse,
                     "no module of ThinLTO index '{}' summarises every definition of '{}': it is "
                     "not that module's index",
                     index.string(), bitcode.string());
  std::size_t imported = 0;
  for (const auto& [guid, info] : **summaries) {
    for (const auto& summary : info.getSummaryList()) {
      bool fromOwn = !own || own->contains(summary->modulePath().str());
      if (!fromOwn && summary->getSummaryKind() == llvm::GlobalValueSummary::FunctionKind)
        ++imported;
    }
  }
  return imported;
}

} // namespace mlgo::corpus::detail
