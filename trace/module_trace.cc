//===- trace/module_trace.cc - one module's part of a trace -----------------===//
#include "module_trace.h"

#include "mlgo/trace/trace_header.h"

#include <cstring>

namespace mlgo::trace {

ModuleTraceBuilder::ModuleTraceBuilder(const protocol::LogHeader& header, std::string module,
                                       std::string buffer)
    : header_(&header), module_(std::move(module)), writer_(header), records_(std::move(buffer)),
      views_(header.features.size()) {
  records_.clear();
  for (size_t i = 0; i + 1 < header.features.size(); ++i)
    featureBytes_ += header.features[i].byteSize();
}

Status ModuleTraceBuilder::add(std::string_view function, std::span<const std::byte> features,
                               std::span<const std::byte> action) {
  const auto& specs = header_->features;
  if (features.size() != featureBytes_ || specs.empty() || action.size() != specs.back().byteSize())
    return makeError(ErrorCode::kInvalidArgument,
                     "module {}: observation of {}+{} bytes, the trace header wants {}+{}", module_,
                     features.size(), action.size(), featureBytes_,
                     specs.empty() ? 0 : specs.back().byteSize());
  if (current_ == SIZE_MAX || functions_[current_] != function) {
    size_t index = 0;
    while (index < functions_.size() && functions_[index] != function)
      ++index;
    if (index == functions_.size()) {
      functions_.emplace_back(function);
      lastOutcome_.push_back(0);
    }
    current_ = index;
    writer_.writeContext(records_, contextName(module_, function));
  }
  size_t offset = 0;
  for (size_t i = 0; i + 1 < specs.size(); ++i) {
    views_[i] = features.subspan(offset, specs[i].byteSize());
    offset += specs[i].byteSize();
  }
  views_.back() = action;
  MLGO_TRY(writer_.writeObservation(records_, views_));
  const float zero = 0.0F;
  MLGO_TRY(writer_.writeOutcome(records_, std::as_bytes(std::span(&zero, 1))));
  // The score's bytes are the last ones before the record's newline.
  lastOutcome_[current_] = records_.size() - 1 - sizeof(float);
  ++observations_;
  return Status::success();
}

Result<std::string> ModuleTraceBuilder::finish(std::span<const ContextResult> rows) {
  for (size_t f = 0; f < functions_.size(); ++f) {
    std::string name = contextName(module_, functions_[f]);
    const ContextResult* row = nullptr;
    for (const ContextResult& candidate : rows)
      if (candidate.inTrace && candidate.context == name)
        row = &candidate;
    if (row == nullptr)
      return makeError(ErrorCode::kInternal, "module {}: no reward for context {}", module_, name);
    float reward = static_cast<float>(row->reward);
    std::memcpy(records_.data() + lastOutcome_[f], &reward, sizeof reward);
  }
  return std::move(records_);
}

} // namespace mlgo::trace
