//===- support/temp_dir.cc - a private temporary directory ----------------===//
#include "mlgo/support/temp_dir.h"

#include "mlgo/support/cleanup_scope.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>

namespace mlgo::support {
namespace {

/// Field 22 of /proc/<pid>/stat (clock ticks after boot), or nullopt when
/// there is no such process.
std::optional<uint64_t> startTimeOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t close = stat.rfind(')'); // The name may hold spaces and parentheses.
  if (close == std::string::npos)
    return std::nullopt;
  std::string_view rest = std::string_view(stat).substr(close + 1);
  // After ")": field 3 (state) ... field 22 (starttime).
  for (int field = 3; field < 22; ++field) {
    size_t space = rest.find(' ', 1);
    if (space == std::string_view::npos)
      return std::nullopt;
    rest.remove_prefix(space);
  }
  rest.remove_prefix(1);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc())
    return std::nullopt;
  return value;
}

bool parseNumber(std::string_view text, uint64_t& value) {
  if (text.empty())
    return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

} // namespace

std::string TempDir::ownerTag() {
  pid_t self = ::getpid();
  return fmt::format("{}.{}", self, startTimeOf(self).value_or(0));
}

std::optional<TempDir::Owner> TempDir::ownerOf(std::string_view name) {
  // <prefix><pid>.<starttime>-XXXXXX
  constexpr size_t kSuffix = 7;
  if (name.size() <= kSuffix || name[name.size() - kSuffix] != '-')
    return std::nullopt;
  name.remove_suffix(kSuffix);
  size_t dash = name.rfind('-');
  if (dash == std::string_view::npos)
    return std::nullopt;
  std::string_view tag = name.substr(dash + 1);
  size_t dot = tag.find('.');
  Owner owner;
  uint64_t pid = 0;
  if (dot == std::string_view::npos || !parseNumber(tag.substr(0, dot), pid) ||
      !parseNumber(tag.substr(dot + 1), owner.startTime) || pid == 0 || pid > (1u << 30))
    return std::nullopt;
  owner.pid = static_cast<pid_t>(pid);
  return owner;
}

bool TempDir::ownerAlive(const Owner& owner) {
  auto started = startTimeOf(owner.pid);
  return started && *started == owner.startTime;
}

size_t TempDir::reapOrphans(const std::filesystem::path& parent) {
  std::filesystem::path root = parent.empty() ? systemTempDir() : parent;
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec);
  size_t reaped = 0;
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with(kNamePrefix))
      continue;
    auto owner = ownerOf(name);
    struct stat st;
    if (!owner || ::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid() || ownerAlive(*owner))
      continue;
    std::error_code removeError;
    std::filesystem::remove_all(it->path(), removeError);
    if (!removeError)
      ++reaped;
  }
  return reaped;
}

std::filesystem::path TempDir::systemTempDir() {
  const char* dir = std::getenv("TMPDIR");
  if (dir != nullptr && *dir != '\0')
    return dir;
  return "/tmp";
}

Result<TempDir> TempDir::create(CleanupScope& scope, std::string_view prefix,
                                const std::filesystem::path& parent) {
  std::filesystem::path base = parent.empty() ? systemTempDir() : parent;
  std::string pattern = (base / (std::string(prefix) + ownerTag() + "-XXXXXX")).string();
  auto path = scope.createPath([&]() -> Result<std::filesystem::path> {
    if (::mkdtemp(pattern.data()) == nullptr)
      return makeError(ErrorCode::kIo, "cannot create a temporary directory in {}: {}",
                       base.string(), std::strerror(errno));
    return std::filesystem::path(pattern);
  });
  if (!path.ok())
    return path.error();
  return TempDir(scope, std::move(*path));
}

TempDir::TempDir(TempDir&& other) noexcept
    : scope_(std::exchange(other.scope_, nullptr)), path_(std::move(other.path_)) {
  other.path_.clear();
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    scope_ = std::exchange(other.scope_, nullptr);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() {
  remove();
}

void TempDir::remove() {
  if (path_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (scope_ != nullptr)
    scope_->removePath(path_);
  path_.clear();
}

} // namespace mlgo::support
