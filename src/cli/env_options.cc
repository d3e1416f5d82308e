//===- src/cli/env_options.cc - flags shared by environment commands ------===//
#include "cli/env_options.h"

#include <string>

namespace mlgo::cli {

void EnvironmentFlags::addTo(CLI::App* command) {
  auto table = env::environmentOptionTable();
  flags_.reserve(table.size()); // never again: CLI11 keeps pointers into the values
  for (const env::EnvironmentOptionSpec& spec : table) {
    if (spec.flag.empty())
      continue;
    Flag& flag = flags_.emplace_back(Flag{&spec, spec.get(options)});
    std::string name(spec.flag), help(spec.help);
    switch (spec.kind) {
    case env::OptionKind::kSwitch:
      flag.value = false; // CLI11: true when given (--flag=false: false)
      flag.option = command->add_flag(name, std::get<bool>(flag.value), help);
      break;
    case env::OptionKind::kCount:
      flag.option = command->add_option(name, std::get<uint64_t>(flag.value), help);
      break;
    case env::OptionKind::kSeconds:
      flag.option = command->add_option(name, std::get<double>(flag.value), help);
      break;
    case env::OptionKind::kTexts:
      flag.option = command->add_option(name, std::get<std::vector<std::string>>(flag.value), help);
      break;
    case env::OptionKind::kText:
    case env::OptionKind::kPath:
      flag.option = command->add_option(name, std::get<std::string>(flag.value), help);
      break;
    }
    if (spec.showDefault)
      flag.option->capture_default_str();
  }
  maxEpisodesOption = command->get_option("--max-episodes");
}

Result<env::EnvironmentOptions> EnvironmentFlags::finish() const {
  env::EnvironmentOptions out = options;
  for (const Flag& flag : flags_) {
    if (flag.option->count() == 0)
      continue;
    env::OptionValue value = flag.value;
    if (flag.spec->kind == env::OptionKind::kSwitch)
      value = std::get<bool>(flag.value) == flag.spec->flagValue;
    MLGO_TRY(env::setEnvironmentOption(*flag.spec, out, std::move(value), flag.spec->flag));
  }
  MLGO_TRY(env::checkEnvironmentOptions(out));
  return out;
}

} // namespace mlgo::cli
