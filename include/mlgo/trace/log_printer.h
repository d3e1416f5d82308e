//===- mlgo/trace/log_printer.h - printing a log ----------------*- C++ -*-===//
///
/// \file
/// LogVisitors that print every record as it is read, so whatever was
/// readable is printed before an error (call finish() with the error, if
/// any, at the end):
///
///  - text: LLVM's log_reader.py layout. `context: NAME` when the context of
///    an observation differs from the last one printed, `observation: N`,
///    one `feature: v,v,...` line per feature, and `score: v` for its
///    outcome.
///  - json: one document, written incrementally:
///        {"header": <the header line verbatim>,
///         "records": [
///           {"context":"m:f","observation":0,"features":{"x":[1,2]},"outcome":[0]},
///           ...],
///         "error": "offset 123: ..."}          <- only when reading failed
///    Tensors are flat row-major arrays; "outcome" is present when the
///    observation has one. Non-finite floats are the strings "nan", "inf",
///    "-inf" (JSON has no such numbers).
///  - csv: a header row `context,observation,<one column per element>[,score]`
///    (a tensor with one element is one column named after it, a larger one
///    `name[i]` per flat index), then one row per observation; the score
///    column is empty for an observation without outcome.
///
/// Output goes to a caller-owned FILE (buffered here; flushed by finish()).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TRACE_LOG_PRINTER_H
#define MLGO_TRACE_LOG_PRINTER_H

#include "mlgo/protocol/tensor_spec.h"
#include "mlgo/trace/log_reader.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mlgo::trace {

enum class PrintFormat : uint8_t { kText, kJson, kCsv };

/// "text", "json", "csv"; kInvalidArgument otherwise.
Result<PrintFormat> parsePrintFormat(std::string_view name);

class LogPrinter : public LogVisitor {
public:
  /// Completes the output (closing JSON, pending CSV row) and flushes it.
  /// `error`: the reading error, if any (json records it in the document).
  virtual Status finish(const std::optional<Error>& error) = 0;
};

std::unique_ptr<LogPrinter> makeLogPrinter(PrintFormat format, std::FILE* out);

/// Appends a tensor's elements in text form, separated by `separator`.
void appendTensorText(std::string& out, const protocol::TensorSpec& spec,
                      std::span<const std::byte> bytes, std::string_view separator = ",");
/// Appends a tensor as a JSON array (non-finite floats as strings).
void appendTensorJson(std::string& out, const protocol::TensorSpec& spec,
                      std::span<const std::byte> bytes);
/// Appends `text` as a JSON string literal.
void appendJsonString(std::string& out, std::string_view text);

} // namespace mlgo::trace

#endif // MLGO_TRACE_LOG_PRINTER_H
