//===- corpus/command_check.cc - refusing unsafe recompiles ---------------===//
#include "mlgo/corpus/command_check.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <system_error>

namespace mlgo::corpus {
namespace {

constexpr std::array<std::string_view, 19> kWritingFlags = {
    "-o",
    "-stats-file",
    "-save-temps",
    "-ftime-trace",
    "-opt-record-file",
    "-foptimization-record-file",
    "-fsave-optimization-record",
    "-dependency-file",
    "-MF",
    "-MD",
    "-MMD",
    "-coverage-notes-file",
    "-stack-usage-file",
    "-serialize-diagnostic-file",
    "-header-include-file",
    "-diagnostic-log-file",
    "-module-dependency-dir",
    "-dependency-dot",
    "-as-secure-log-file",
};

/// cc1 (and a few driver) flags whose value is the next argument. A word
/// after one of these is its value, not a positional argument.
constexpr std::string_view kSeparateValueFlags[] = {
    "-triple", "-target-cpu", "-tune-cpu", "-target-feature", "-target-abi",
    "-target-linker-version", "-aux-triple", "-aux-target-cpu", "-aux-target-feature",
    "-main-file-name", "-mrelocation-model", "-pic-level", "-mcode-model", "-mdebug-pass",
    "-mthread-model", "-mlimit-float-precision", "-mfloat-abi", "-meabi", "-mregparm", "-mtp",
    "-resource-dir", "-I", "-D", "-U", "-F", "-include", "-include-pch", "-imacros", "-isystem",
    "-idirafter", "-iquote", "-isysroot", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
    "-internal-isystem", "-internal-externc-isystem", "-cxx-isystem", "-c-isystem",
    "-objc-isystem", "-objcxx-isystem", "-ferror-limit", "-ftemplate-depth",
    "-fconstexpr-depth", "-fconstexpr-steps", "-ftemplate-backtrace-limit",
    "-fmacro-backtrace-limit", "-fconstexpr-backtrace-limit", "-fspell-checking-limit",
    "-fcaret-diagnostics-max-lines", "-stack-protector", "-stack-protector-buffer-size",
    "-x", "-MT", "-MQ", "-dwarf-debug-flags", "-dwarf-debug-producer", "-split-dwarf-file",
    "-split-dwarf-output", "-source-date-epoch", "-coverage-data-file", "-opt-record-passes",
    "-opt-record-format", "-fdiagnostics-format", "-default-function-attr", "-load",
    "-plugin", "-add-plugin", "-fmodule-name", "-fmodule-feature", "-fmodules-ignore-macro",
    "-fmodules-embed-file", "-mlink-bitcode-file", "-mlink-builtin-bitcode",
    "-fembed-offload-object", "-fcuda-include-gpubinary", "-fopenmp-host-ir-file-path",
    "-darwin-target-variant-triple", "-target-sdk-version", "-ftrapv-handler",
    "-fprofile-remapping-file", "-fprofile-sample-use", "-fthinlto-index", "-remap-file",
    "-ast-dump-filter", "-code-completion-at", "-fobjc-arc-cxxlib", "-fvisibility",
    "-ftype-visibility", "-fsanitize-coverage-type", "-dependency-dot", "-module-dependency-dir",
    "-header-include-file", "-diagnostic-log-file", "-serialize-diagnostic-file",
    "-stack-usage-file", "-coverage-notes-file", "-dependency-file", "-MF", "-o",
    "-opt-record-file", "-as-secure-log-file", "-Xclang", "-mllvm", "-target", "-arch",
    "-isystem-after", "-fmodule-file", "-fmodule-map-file", "-fmodules-cache-path",
    "-object-file-name", "-fdebug-compilation-dir", "-fcoverage-compilation-dir",
    "-ffile-compilation-dir"};

/// The writing flag `arg` spells, or empty.
std::string_view writingFlagIn(std::string_view arg) {
  for (std::string_view flag : kWritingFlags) {
    if (!arg.starts_with(flag))
      continue;
    if (arg.size() == flag.size() || arg[flag.size()] == '=')
      return flag;
    if (flag == "-MF") // Also joined: -MFdeps.d.
      return flag;
  }
  return {};
}

bool takesSeparateValue(std::string_view arg) {
  return std::find(std::begin(kSeparateValueFlags), std::end(kSeparateValueFlags), arg) !=
         std::end(kSeparateValueFlags);
}

Error writingFlagError(std::string_view module, std::string_view spelled, std::string_view flag) {
  // `-o` is mlgo-env's own (flag rules may not touch it): only the corpus
  // can be fixed.
  std::string way = flag == "-o" ? std::string("fix the corpus")
                                 : fmt::format("delete it (--delete-flag={}) or fix the corpus", flag);
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("module {}: its recompile command has '{}': {} makes clang write a "
                           "file outside the compile's own directory; {}",
                           module, spelled, flag, way));
}

} // namespace

std::span<const std::string_view> writingFlags() {
  return kWritingFlags;
}

Status checkCommandArgs(std::string_view module, std::span<const std::string> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "-Xclang" || arg == "-mllvm") {
      if (i + 1 == args.size())
        return makeError(ErrorCode::kInvalidArgument,
                         "module {}: its recompile command ends with '{}' and no value", module,
                         arg);
      std::string_view inner = args[i + 1];
      if (std::string_view flag = writingFlagIn(inner); !flag.empty())
        return writingFlagError(module, fmt::format("{} {}", arg, inner), flag);
      ++i;
      // `-Xclang -flag -Xclang value`: the value travels behind -Xclang too.
      if (arg == "-Xclang" && takesSeparateValue(inner) && i + 2 < args.size() &&
          args[i + 1] == "-Xclang")
        i += 2;
      continue;
    }
    if (std::string_view flag = writingFlagIn(arg); !flag.empty())
      return writingFlagError(module, arg, flag);
    if (arg.size() > 1 && arg.front() == '-') {
      if (takesSeparateValue(arg))
        ++i; // Its value, whatever it looks like.
      continue;
    }
    return makeError(ErrorCode::kInvalidArgument,
                     "module {}: its recompile command has the positional argument '{}'{}: "
                     "clang would take it as another input; the module's only input is its "
                     ".bc. Fix the corpus (or, if it is the value of a flag, delete that flag "
                     "with --delete-flag)",
                     module, arg,
                     i > 0 ? fmt::format(" (argument {}, after '{}')", i + 1, args[i - 1])
                           : std::string());
  }
  return Status::success();
}

Status checkModule(const ModuleSpec& module, const FlagRules& rules) {
  std::error_code ec;
  auto size = std::filesystem::file_size(module.bitcodePath, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "module {}: cannot read {}: {}", module.name,
                     module.bitcodePath.string(), ec.message());
  if (size == 0)
    return makeError(ErrorCode::kInvalidArgument,
                     "module {}: {} is empty (0 bytes); it cannot be compiled. Remove the "
                     "module from the corpus or restore its bitcode",
                     module.name, module.bitcodePath.string());
  auto args = recompileArgs(module, "/dev/null", rules);
  if (!args.ok())
    return args.error();
  // recompileArgs appends `-x ir <bc>`, the ThinLTO flags and `-o <out>`:
  // those are ours.
  size_t ours = 3 + (module.thinLtoIndexPath ? 3 : 0) + 2;
  if (args->size() < ours)
    return makeError(ErrorCode::kInternal, "module {}: recompile command too short", module.name);
  return checkCommandArgs(module.name,
                          std::span<const std::string>(args->data(), args->size() - ours));
}

Status checkCorpusCommands(const Corpus& corpus, const FlagRules& rules) {
  for (const ModuleSpec& module : corpus.modules())
    MLGO_TRY(checkModule(module, rules));
  return Status::success();
}

} // namespace mlgo::corpus
