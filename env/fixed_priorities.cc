//===- env/fixed_priorities.cc - priorities the host answers ---------------===//
#include "mlgo/env/fixed_priorities.h"

#include "problems_impl.h"

#include <llvm/Support/JSON.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace mlgo::env {
namespace {

/// The largest float32 below 2^32: the priority rule's upper bound.
constexpr double kHighestPriority = 4294967040.0;

Error bad(std::string_view origin, const std::string& what) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("priorities file {}: {}", origin, what));
}

Result<std::map<uint64_t, double>> readSteps(const llvm::json::Object& steps,
                                             std::string_view origin, std::string_view where) {
  std::map<uint64_t, double> out;
  for (const auto& [key, value] : steps) {
    std::string text = key.str();
    uint64_t step = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), step);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      return bad(origin, fmt::format("{}: step '{}' is not a question index", where, text));
    std::optional<double> multiplier = value.getAsNumber();
    if (!multiplier || !std::isfinite(*multiplier) || *multiplier < 0)
      return bad(origin, fmt::format("{}: the multiplier of step {} is not a finite number "
                                     ">= 0",
                                     where, step));
    out[step] = *multiplier;
  }
  return out;
}

Result<PriorityMultipliers> readFunctions(const llvm::json::Object& functions,
                                          std::string_view origin, std::string_view module) {
  PriorityMultipliers out;
  for (const auto& [name, value] : functions) {
    std::string where = fmt::format("module '{}', function '{}'", module, name.str());
    const llvm::json::Object* function = value.getAsObject();
    if (function == nullptr)
      return bad(origin, where + " is not an object");
    const llvm::json::Object* steps = function->getObject("multipliers");
    if (steps == nullptr) {
      if (function->get("multipliers") != nullptr)
        return bad(origin, where + ": `multipliers` is not an object");
      out[name.str()] = {};
      continue;
    }
    auto read = readSteps(*steps, origin, where);
    if (!read.ok())
      return read.error();
    out[name.str()] = std::move(*read);
  }
  return out;
}

} // namespace

Result<std::shared_ptr<const FixedPriorities>>
FixedPriorities::parse(std::string_view text, std::string_view origin) {
  auto value = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    return bad(origin, "not JSON: " + llvm::toString(value.takeError()));
  const llvm::json::Object* object = value->getAsObject();
  const llvm::json::Array* modules = object ? object->getArray("modules") : nullptr;
  if (modules == nullptr)
    return bad(origin, "no `modules` list");
  auto out = std::make_shared<FixedPriorities>();
  for (size_t i = 0; i < modules->size(); ++i) {
    const llvm::json::Object* entry = (*modules)[i].getAsObject();
    std::optional<llvm::StringRef> name = entry ? entry->getString("module") : std::nullopt;
    const llvm::json::Object* functions = entry ? entry->getObject("functions") : nullptr;
    if (!name || functions == nullptr)
      return bad(origin, fmt::format("modules[{}] lacks `module` or `functions`", i));
    if (out->modules_.contains(name->str()))
      return bad(origin, fmt::format("module '{}' is listed twice", name->str()));
    auto read = readFunctions(*functions, origin, name->str());
    if (!read.ok())
      return read.error();
    out->modules_.emplace(name->str(), std::move(*read));
  }
  return std::shared_ptr<const FixedPriorities>(std::move(out));
}

Result<std::shared_ptr<const FixedPriorities>>
FixedPriorities::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::kNotFound, "priorities file {}: cannot be read", file.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return makeError(ErrorCode::kIo, "priorities file {}: read failed", file.string());
  return parse(text.str(), file.string());
}

const PriorityMultipliers* FixedPriorities::find(std::string_view module) const {
  auto it = modules_.find(module);
  return it == modules_.end() ? nullptr : &it->second;
}

Result<std::span<const std::byte>> PriorityAnswerer::answer(const protocol::LogHeader& header,
                                                            const Observation& observation) {
  if (!bound_) {
    ProblemOptions options;
    options.priorityFallback = "weight";
    auto bound = detail::priorityProblem().bind(header, options);
    if (!bound.ok())
      return bound.error();
    bound_ = std::move(*bound);
    advice_.resize(bound_->actionSpec().byteSize());
  }
  auto [at, added] = counts_.try_emplace(std::string(observation.context), 0);
  uint64_t step = at->second++;
  double multiplier = 1.0;
  if (auto function = multipliers_->find(observation.context); function != multipliers_->end())
    if (auto m = function->second.find(step); m != function->second.end())
      multiplier = m->second;
  double base = detail::numericAction(bound_->fallback(observation));
  double priority = std::clamp(base * multiplier, 0.0, kHighestPriority);
  MLGO_TRY(bound_->encode(ActionValue(priority), advice_));
  ++answered_;
  return std::span<const std::byte>(advice_);
}

} // namespace mlgo::env
