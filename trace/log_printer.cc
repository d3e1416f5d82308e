//===- trace/log_printer.cc - printing a log ---------------------------------===//
#include "mlgo/trace/log_printer.h"

#include "context_rewards.h"

#include <cmath>

namespace mlgo::trace {
namespace {

constexpr size_t kFlushBytes = 1 << 16;

/// Buffered output to a FILE.
class Sink {
public:
  explicit Sink(std::FILE* out) : out_(out) {}
  std::string& buffer() { return buffer_; }
  Status maybeFlush() { return buffer_.size() >= kFlushBytes ? flush() : Status::success(); }
  Status flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size())
      return makeError(ErrorCode::kIo, "cannot write the output");
    buffer_.clear();
    if (std::fflush(out_) != 0)
      return makeError(ErrorCode::kIo, "cannot write the output");
    return Status::success();
  }

private:
  std::FILE* out_;
  std::string buffer_;
};

class TextPrinter final : public LogPrinter {
public:
  explicit TextPrinter(std::FILE* out) : sink_(out) {}

  Status header(const protocol::LogHeader& header, std::string_view) override {
    header_ = header;
    return Status::success();
  }
  Status context(std::string_view name) override {
    context_.assign(name);
    return Status::success();
  }
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override {
    std::string& out = sink_.buffer();
    if (!printedContext_ || *printedContext_ != context_) {
      out += "context: ";
      out += context_;
      out += '\n';
      printedContext_ = context_;
    }
    fmt::format_to(std::back_inserter(out), "observation: {}\n", id);
    for (size_t i = 0; i < tensors.size(); ++i) {
      out += header_.features[i].name();
      out += ": ";
      appendTensorText(out, header_.features[i], tensors[i]);
      out += '\n';
    }
    return sink_.maybeFlush();
  }
  Status outcome(int64_t, std::span<const std::byte> score) override {
    std::string& out = sink_.buffer();
    out += header_.score->name();
    out += ": ";
    appendTensorText(out, *header_.score, score);
    out += '\n';
    return sink_.maybeFlush();
  }
  Status finish(const std::optional<Error>&) override { return sink_.flush(); }

private:
  Sink sink_;
  protocol::LogHeader header_;
  std::string context_;
  std::optional<std::string> printedContext_;
};

class JsonPrinter final : public LogPrinter {
public:
  explicit JsonPrinter(std::FILE* out) : sink_(out) {}

  Status header(const protocol::LogHeader& header, std::string_view line) override {
    header_ = header;
    std::string& out = sink_.buffer();
    out += "{\"header\":";
    out += line;
    out += ",\n\"records\":[";
    started_ = true;
    return Status::success();
  }
  Status context(std::string_view name) override {
    context_.assign(name);
    return Status::success();
  }
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override {
    closeRecord();
    std::string& out = sink_.buffer();
    out += first_ ? "\n" : ",\n";
    first_ = false;
    out += "{\"context\":";
    appendJsonString(out, context_);
    fmt::format_to(std::back_inserter(out), ",\"observation\":{},\"features\":{{", id);
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (i != 0)
        out += ',';
      appendJsonString(out, header_.features[i].name());
      out += ':';
      appendTensorJson(out, header_.features[i], tensors[i]);
    }
    out += '}';
    open_ = true;
    return sink_.maybeFlush();
  }
  Status outcome(int64_t, std::span<const std::byte> score) override {
    std::string& out = sink_.buffer();
    out += ",\"outcome\":";
    appendTensorJson(out, *header_.score, score);
    closeRecord();
    return sink_.maybeFlush();
  }
  Status finish(const std::optional<Error>& error) override {
    closeRecord();
    std::string& out = sink_.buffer();
    if (!started_)
      out += "{\"header\":null,\n\"records\":[";
    out += "\n]";
    if (error) {
      out += ",\n\"error\":";
      appendJsonString(out, error->message());
    }
    out += "}\n";
    return sink_.flush();
  }

private:
  void closeRecord() {
    if (open_)
      sink_.buffer() += '}';
    open_ = false;
  }

  Sink sink_;
  protocol::LogHeader header_;
  std::string context_;
  bool started_ = false;
  bool first_ = true;
  bool open_ = false;
};

class CsvPrinter final : public LogPrinter {
public:
  explicit CsvPrinter(std::FILE* out) : sink_(out) {}

  Status header(const protocol::LogHeader& header, std::string_view) override {
    header_ = header;
    std::string& out = sink_.buffer();
    out += "context,observation";
    for (const auto& spec : header.features) {
      for (uint64_t i = 0; i < spec.elementCount(); ++i) {
        out += ',';
        appendCsvField(out, spec.elementCount() == 1 ? spec.name()
                                                     : fmt::format("{}[{}]", spec.name(), i));
      }
    }
    if (header.score) {
      out += ',';
      appendCsvField(out, header.score->name());
    }
    out += '\n';
    return Status::success();
  }
  Status context(std::string_view name) override {
    context_.assign(name);
    return Status::success();
  }
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override {
    closeRow();
    std::string& out = sink_.buffer();
    appendCsvField(out, context_);
    fmt::format_to(std::back_inserter(out), ",{}", id);
    for (size_t i = 0; i < tensors.size(); ++i) {
      out += ',';
      appendTensorText(out, header_.features[i], tensors[i]);
    }
    open_ = true;
    return sink_.maybeFlush();
  }
  Status outcome(int64_t, std::span<const std::byte> score) override {
    std::string& out = sink_.buffer();
    out += ',';
    // A multi-element score takes one field (space-separated).
    appendTensorText(out, *header_.score, score, " ");
    out += '\n';
    open_ = false;
    return sink_.maybeFlush();
  }
  Status finish(const std::optional<Error>&) override {
    closeRow();
    return sink_.flush();
  }

private:
  void closeRow() {
    if (!open_)
      return;
    sink_.buffer() += header_.score ? ",\n" : "\n";
    open_ = false;
  }

  Sink sink_;
  protocol::LogHeader header_;
  std::string context_;
  bool open_ = false;
};

} // namespace

Result<PrintFormat> parsePrintFormat(std::string_view name) {
  if (name == "text")
    return PrintFormat::kText;
  if (name == "json")
    return PrintFormat::kJson;
  if (name == "csv")
    return PrintFormat::kCsv;
  return makeError(ErrorCode::kInvalidArgument, "--format '{}' is unknown: use text, json or csv",
                   name);
}

std::unique_ptr<LogPrinter> makeLogPrinter(PrintFormat format, std::FILE* out) {
  switch (format) {
  case PrintFormat::kText:
    return std::make_unique<TextPrinter>(out);
  case PrintFormat::kJson:
    return std::make_unique<JsonPrinter>(out);
  case PrintFormat::kCsv:
    return std::make_unique<CsvPrinter>(out);
  }
  return nullptr;
}

void appendTensorText(std::string& out, const protocol::TensorSpec& spec,
                      std::span<const std::byte> bytes, std::string_view separator) {
  for (uint64_t i = 0; i < spec.elementCount(); ++i) {
    if (i != 0)
      out += separator;
    protocol::appendElementText(out, spec.type(), bytes.data(), i);
  }
}

void appendTensorJson(std::string& out, const protocol::TensorSpec& spec,
                      std::span<const std::byte> bytes) {
  out += '[';
  bool floating = protocol::isFloatingPoint(spec.type());
  for (uint64_t i = 0; i < spec.elementCount(); ++i) {
    if (i != 0)
      out += ',';
    if (floating && !std::isfinite(protocol::elementAsDouble(spec.type(), bytes.data(), i))) {
      out += '"';
      protocol::appendElementText(out, spec.type(), bytes.data(), i);
      out += '"';
    } else {
      protocol::appendElementText(out, spec.type(), bytes.data(), i);
    }
  }
  out += ']';
}

void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
      else
        out += c;
    }
  }
  out += '"';
}

} // namespace mlgo::trace
