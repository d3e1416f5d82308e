//===- mlgo/ir2vec/embedding_format.h - printing embeddings -----*- C++ -*-===//
///
/// \file
/// Text and JSON forms of ModuleEmbeddings. Numbers are printed in their
/// shortest form that reads back to the same double (full precision).
///
/// JSON: one object per module on one line (so several modules make JSON
/// Lines):
///
///     {"module":"a.bc","level":"func","dimension":3,
///      "embeddings":[{"function":"f","vector":[0.5,-1.25,3]}, ...]}
///
/// bb records add "block" (index in the function) and "block_name"; inst
/// records add "block", "block_name" and "instruction" (its IR text).
///
/// Text: a comment line, then one record per line, fields separated by tabs,
/// the vector last as space-separated numbers:
///
///     # module a.bc level func dimension 3
///     f	0.5 -1.25 3                          (func)
///     f	0	entry	0.5 -1.25 3                  (bb: function, block, name)
///     f	0	%x = add i32 %a, 1	0.5 -1.25 3   (inst: function, block, IR text)
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_IR2VEC_EMBEDDING_FORMAT_H
#define MLGO_IR2VEC_EMBEDDING_FORMAT_H

#include "mlgo/ir2vec/embedder.h"
#include "mlgo/support/result.h"

#include <string>
#include <string_view>

namespace mlgo::ir2vec {

enum class EmbeddingFormat { kText, kJson };

/// "text" or "json".
Result<EmbeddingFormat> parseEmbeddingFormat(std::string_view text);

/// The module's records in `format`, ending with a newline.
std::string formatEmbeddings(const ModuleEmbeddings& embeddings, EmbeddingFormat format);

} // namespace mlgo::ir2vec

#endif // MLGO_IR2VEC_EMBEDDING_FORMAT_H
