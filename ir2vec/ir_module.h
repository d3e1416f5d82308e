//===- ir2vec/ir_module.h - reading IR files into LLVM modules --*- C++ -*-===//
///
/// \file
/// Private to ir2vec/: loads a bitcode (or textual IR) file into an
/// llvm::Module, with errors as Result values naming the file.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_IR_MODULE_H
#define MLGO_IR2VEC_IR_MODULE_H

#include "mlgo/support/result.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <filesystem>
#include <memory>
#include <string_view>

namespace mlgo::ir2vec::detail {

/// Parses `path` in `context`. kNotFound when the file does not exist,
/// kParse when it is not valid IR (LLVM's diagnostic in the message).
Result<std::unique_ptr<llvm::Module>> loadModule(const std::filesystem::path& path,
                                                 llvm::LLVMContext& context);

/// Parses an in-memory bitcode/IR buffer; `name` is used in messages.
Result<std::unique_ptr<llvm::Module>> parseModule(std::string_view content, std::string_view name,
                                                  llvm::LLVMContext& context);

} // namespace mlgo::ir2vec::detail

#endif // MLGO_IR2VEC_IR_MODULE_H
