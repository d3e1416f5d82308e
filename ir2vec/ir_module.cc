//===- ir2vec/ir_module.cc - reading IR files into LLVM modules -----------===//
#include "ir_module.h"

#include "file_io.h"

#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

namespace mlgo::ir2vec::detail {

Result<std::unique_ptr<llvm::Module>> parseModule(std::string_view content, std::string_view name,
                                                  llvm::LLVMContext& context) {
  llvm::SMDiagnostic diagnostic;
  llvm::MemoryBufferRef buffer(llvm::StringRef(content.data(), content.size()),
                               llvm::StringRef(name.data(), name.size()));
  std::unique_ptr<llvm::Module> module = llvm::parseIR(buffer, diagnostic, context);
  if (!module) {
    std::string message;
    llvm::raw_string_ostream out(message);
    diagnostic.print(nullptr, out, /*ShowColors=*/false, /*ShowKindLabel=*/false);
    out.flush();
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    return makeError(ErrorCode::kParse, "{}: not a valid LLVM IR module: {}", name, message);
  }
  return module;
}

Result<std::unique_ptr<llvm::Module>> loadModule(const std::filesystem::path& path,
                                                 llvm::LLVMContext& context) {
  Result<std::string> content = readFile(path);
  if (!content)
    return std::move(content).error();
  return parseModule(*content, path.string(), context);
}

} // namespace mlgo::ir2vec::detail
