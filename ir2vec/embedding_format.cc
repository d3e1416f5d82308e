//===- ir2vec/embedding_format.cc - printing embeddings -------------------===//
#include "mlgo/ir2vec/embedding_format.h"

#include "number_text.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace mlgo::ir2vec {
namespace {

void appendVector(std::string& out, const std::vector<double>& vector, char separator) {
  for (size_t i = 0; i < vector.size(); ++i) {
    if (i)
      out += separator;
    detail::appendNumber(out, vector[i]);
  }
}

/// Tabs and newlines inside names or IR text would break the line format.
std::string textField(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string formatText(const ModuleEmbeddings& embeddings) {
  std::string out = fmt::format("# module {} level {} dimension {}\n", embeddings.module,
                                levelName(embeddings.level), embeddings.dimension);
  for (const EmbeddingRecord& record : embeddings.records) {
    out += textField(record.function);
    out += '\t';
    if (embeddings.level == EmbeddingLevel::kBasicBlock)
      out += fmt::format("{}\t{}\t", record.block, textField(record.blockName));
    else if (embeddings.level == EmbeddingLevel::kInstruction)
      out += fmt::format("{}\t{}\t", record.block, textField(record.instruction));
    appendVector(out, record.vector, ' ');
    out += '\n';
  }
  return out;
}

std::string formatJson(const ModuleEmbeddings& embeddings) {
  std::string out;
  llvm::raw_string_ostream stream(out);
  llvm::json::OStream json(stream);
  std::string numbers;
  json.object([&] {
    json.attribute("module", llvm::json::fixUTF8(embeddings.module));
    json.attribute("level", llvm::StringRef(levelName(embeddings.level)));
    json.attribute("dimension", embeddings.dimension);
    json.attributeArray("embeddings", [&] {
      for (const EmbeddingRecord& record : embeddings.records) {
        json.object([&] {
          json.attribute("function", llvm::json::fixUTF8(record.function));
          if (embeddings.level != EmbeddingLevel::kFunction) {
            json.attribute("block", static_cast<int64_t>(record.block));
            json.attribute("block_name", llvm::json::fixUTF8(record.blockName));
          }
          if (embeddings.level == EmbeddingLevel::kInstruction)
            json.attribute("instruction", llvm::json::fixUTF8(record.instruction));
          numbers = "[";
          appendVector(numbers, record.vector, ',');
          numbers += "]";
          json.attributeBegin("vector");
          json.rawValue(numbers);
          json.attributeEnd();
        });
      }
    });
  });
  stream.flush();
  out += '\n';
  return out;
}

} // namespace

Result<EmbeddingFormat> parseEmbeddingFormat(std::string_view text) {
  if (text == "text")
    return EmbeddingFormat::kText;
  if (text == "json")
    return EmbeddingFormat::kJson;
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown output format '{}' (expected text or json)", text);
}

std::string formatEmbeddings(const ModuleEmbeddings& embeddings, EmbeddingFormat format) {
  return format == EmbeddingFormat::kJson ? formatJson(embeddings) : formatText(embeddings);
}

} // namespace mlgo::ir2vec
