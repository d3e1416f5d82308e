//===- mlgo/ir2vec/module_list.h - which modules to read --------*- C++ -*-===//
///
/// \file
/// Turns command-line inputs into a list of IR files for the ir2vec
/// commands. Corpus directories are the corpus layer's business
/// (mlgo::corpus::Corpus); this handles plain files and directories.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_MODULE_LIST_H
#define MLGO_IR2VEC_MODULE_LIST_H

#include "mlgo/support/result.h"

#include <filesystem>
#include <vector>

namespace mlgo::ir2vec {

/// Each input may be:
///  - a directory: every *.bc file below it (except ThinLTO indices,
///    *.thinlto.bc), sorted by path;
///  - a file (bitcode or textual IR), taken as is.
/// kNotFound for a missing input, kIo for an unreadable directory,
/// kInvalidArgument when nothing is found.
Result<std::vector<std::filesystem::path>>
resolveModules(const std::vector<std::filesystem::path>& inputs);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_MODULE_LIST_H
