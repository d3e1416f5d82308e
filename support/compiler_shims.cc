//===- support/compiler_shims.cc - compiler names on PATH -----------------===//
#include "mlgo/support/compiler_shims.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <cerrno>
#include <fstream>
#include <system_error>

namespace mlgo::support {

namespace fs = std::filesystem;

namespace {

constexpr int kMinVersion = 4, kMaxVersion = 30;
constexpr std::string_view kCScript = ".mlgo-shim-c", kCxxScript = ".mlgo-shim-c++";

/// The name families shimmed behind a target prefix too, with their role.
constexpr std::pair<std::string_view, CompilerRole> kFamilies[] = {
    {"gcc", CompilerRole::kC},
    {"g++", CompilerRole::kCxx},
    {"clang", CompilerRole::kC},
    {"clang++", CompilerRole::kCxx},
};

Status checkCommand(const std::vector<std::string>& command, const fs::path& dir,
                    std::string_view role) {
  if (command.empty() || command.front().empty())
    return makeError(ErrorCode::kInvalidArgument, "no {} command given for the compiler shims",
                     role);
  fs::path program(command.front());
  if (!program.is_absolute())
    return makeError(ErrorCode::kInvalidArgument,
                     "the {} command of the compiler shims must start with an absolute path (it "
                     "would be looked up in PATH, where the shims are): '{}'",
                     role, command.front());
  fs::path absDir = fs::absolute(dir).lexically_normal();
  fs::path rel = program.lexically_normal().lexically_relative(absDir);
  if (!rel.empty() && *rel.begin() != "..")
    return makeError(ErrorCode::kInvalidArgument,
                     "the {} command of the compiler shims, '{}', lies inside the shim "
                     "directory '{}' (a shim would run itself)",
                     role, command.front(), dir.string());
  return Status::success();
}

std::string script(const std::vector<std::string>& command, std::string_view role) {
  std::string text = fmt::format("#!/bin/sh\n# Written by mlgo-env: the {} compiler names in "
                                 "this directory run this.\nexec",
                                 role);
  for (const std::string& word : command)
    text += " " + shellQuote(word);
  return text + " \"$@\"\n";
}

Status writeScript(const fs::path& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush())
      return makeError(ErrorCode::kIo, "cannot write the compiler shim '{}'", path.string());
  }
  if (::chmod(path.c_str(), 0755) != 0)
    return makeError(ErrorCode::kIo, "cannot make '{}' executable: {}", path.string(),
                     std::generic_category().message(errno));
  return Status::success();
}

Status writeAll(const fs::path& dir, const CompilerShimOptions& options) {
  MLGO_TRY(writeScript(dir / kCScript, script(options.cCommand, "C")));
  MLGO_TRY(writeScript(dir / kCxxScript, script(options.cxxCommand, "C++")));
  std::string machine = options.machine.empty() ? hostMachine() : options.machine;
  for (const CompilerShimName& shim : compilerShimNames(machine)) {
    std::error_code ec;
    fs::create_symlink(shim.role == CompilerRole::kC ? kCScript : kCxxScript, dir / shim.name, ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot write the compiler shim '{}': {}",
                       (dir / shim.name).string(), ec.message());
  }
  return Status::success();
}

} // namespace

std::string hostMachine() {
  struct utsname names = {};
  if (::uname(&names) != 0)
    return "x86_64"; // uname(2) cannot fail with a valid buffer.
  return names.machine;
}

std::vector<CompilerShimName> compilerShimNames(std::string_view machine) {
  std::vector<CompilerShimName> names = {{"cc", CompilerRole::kC}, {"c++", CompilerRole::kCxx}};
  std::vector<CompilerShimName> family;
  for (auto [base, role] : kFamilies) {
    family.push_back({std::string(base), role});
    for (int version = kMinVersion; version <= kMaxVersion; ++version)
      family.push_back({fmt::format("{}-{}", base, version), role});
  }
  names.insert(names.end(), family.begin(), family.end());
  for (std::string_view vendor : {"", "pc-", "unknown-"}) {
    std::string prefix = fmt::format("{}-{}linux-gnu-", machine, vendor);
    for (const CompilerShimName& shim : family)
      names.push_back({prefix + shim.name, shim.role});
  }
  return names;
}

Status writeCompilerShims(const fs::path& dir, const CompilerShimOptions& options) {
  MLGO_TRY(checkCommand(options.cCommand, dir, "C"));
  MLGO_TRY(checkCommand(options.cxxCommand, dir, "C++"));
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || ec)
    return makeError(ErrorCode::kIo, "cannot create the compiler shim directory '{}': {}",
                     dir.string(), ec ? ec.message() : "it exists already");
  Status written = writeAll(dir, options);
  if (!written.ok())
    fs::remove_all(dir, ec);
  return written;
}

std::string shimmedPath(const fs::path& dir, const char* path) {
  if (path == nullptr)
    path = "/usr/local/bin:/usr/bin:/bin";
  return *path == '\0' ? dir.string() : dir.string() + ":" + path;
}

std::string shellQuote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

} // namespace mlgo::support
