//===- table/entry_priorities.cc - an entry's register priorities -----------===//
#include "entry_priorities.h"

#include "json_writing.h"

#include <charconv>
#include <cmath>

namespace mlgo::table {
namespace {

Error bad(const std::string& where, const std::string& module, const std::string& what) {
  return makeError(ErrorCode::kInvalidArgument, "tuning file '{}': entry '{}': priorities: {}",
                   where, module, what);
}

bool validMultiplier(double m) { return std::isfinite(m) && m >= 0; }

} // namespace

std::optional<uint64_t> priorityStep(std::string_view text) {
  uint64_t step = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), step);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      (text.size() > 1 && text.front() == '0'))
    return std::nullopt;
  return step;
}

Result<std::optional<EntryPriorities>> parsePriorities(const llvm::json::Object& o,
                                                       const std::string& module,
                                                       const std::string& where) {
  const llvm::json::Value* value = o.get("priorities");
  if (!value)
    return std::optional<EntryPriorities>();
  const auto* object = value->getAsObject();
  if (!object)
    return bad(where, module, "not an object");
  auto questions = object->getInteger("questions");
  const auto* functions = object->getObject("functions");
  if (!questions || *questions < 0 || !functions)
    return bad(where, module, "needs 'questions' (a count) and 'functions' (an object)");
  EntryPriorities out;
  out.questions = static_cast<uint64_t>(*questions);
  for (const auto& [name, steps] : *functions) {
    const auto* byStep = steps.getAsObject();
    if (!byStep)
      return bad(where, module, "function '" + name.str() + "' is not an object of steps");
    auto& kept = out.multipliers[name.str()];
    for (const auto& [key, multiplier] : *byStep) {
      llvm::StringRef text = key;
      auto step = priorityStep(std::string_view(text.data(), text.size()));
      auto number = multiplier.getAsNumber();
      if (!step)
        return bad(where, module,
                   "function '" + name.str() + "': step '" + key.str() + "' is not an index");
      if (!number || !validMultiplier(*number))
        return bad(where, module,
                   fmt::format("function '{}': step {}: the multiplier must be a finite "
                               "number >= 0",
                               name.str(), *step));
      kept[*step] = *number;
    }
  }
  return std::optional<EntryPriorities>(std::move(out));
}

Status checkPriorities(const EntryPriorities& priorities, const std::string& what) {
  for (const auto& [name, steps] : priorities.multipliers)
    for (const auto& [step, multiplier] : steps)
      if (!validMultiplier(multiplier))
        return makeError(ErrorCode::kInvalidArgument,
                         "{}function '{}': step {}: the multiplier must be a finite number >= 0",
                         what, name, step);
  return Status::success();
}

bool appendPriorities(std::string& out, const EntryPriorities& priorities) {
  std::string text =
      fmt::format(", \"priorities\": {{\"questions\": {}, \"functions\": {{", priorities.questions);
  bool firstFunction = true;
  for (const auto& [name, steps] : priorities.multipliers) {
    text += firstFunction ? "" : ", ";
    firstFunction = false;
    if (!appendQuoted(text, name))
      return false;
    text += ": {";
    bool firstStep = true;
    for (const auto& [step, multiplier] : steps) {
      text += fmt::format("{}\"{}\": {}", firstStep ? "" : ", ", step, floatText(multiplier));
      firstStep = false;
    }
    text += "}";
  }
  out += text + "}}";
  return true;
}

} // namespace mlgo::table
