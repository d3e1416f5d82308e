//===- env/cache_files.cc - what the on-disk caches share -----------------===//
#include "cache_files.h"

#include <llvm/Support/BLAKE3.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace mlgo::env::detail {
namespace {

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  return fmt::format("{}.{}.{:x}", ::getpid(), counter.fetch_add(1), rng());
}

FileIdentity identityFrom(const struct stat& st) {
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                      static_cast<uint64_t>(st.st_size),
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

class Descriptor {
public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

} // namespace

struct KeyHasher::State {
  llvm::BLAKE3 hasher;
};

KeyHasher::KeyHasher(std::string_view tag) : state_(std::make_unique<State>()) {
  add(tag);
}
KeyHasher::~KeyHasher() = default;

void KeyHasher::add(std::string_view field) {
  uint64_t size = field.size();
  state_->hasher.update(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
  state_->hasher.update(llvm::StringRef(field.data(), field.size()));
}

std::string KeyHasher::finish() {
  auto digest = state_->hasher.final();
  return hex(digest);
}

Result<FileIdentity> identityOf(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return makeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot stat {}: {}",
                     path.string(), std::strerror(errno));
  return identityFrom(st);
}

Result<FileDigest> digestFile(const std::filesystem::path& path) {
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return makeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot read {}: {}",
                     path.string(), std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return makeError(ErrorCode::kIo, "cannot stat {}: {}", path.string(), std::strerror(errno));
  llvm::BLAKE3 hasher;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(ErrorCode::kIo, "error reading {}: {}", path.string(), std::strerror(errno));
    if (n == 0)
      break;
    hasher.update(llvm::StringRef(buffer, static_cast<size_t>(n)));
  }
  auto digest = hasher.final();
  return FileDigest{hex(digest), identityFrom(st)};
}

Result<std::string> DigestMemo::digest(const std::filesystem::path& path) {
  auto now = identityOf(path);
  if (!now.ok())
    return now.error();
  {
    std::lock_guard lock(mutex_);
    auto it = known_.find(path.string());
    if (it != known_.end() && it->second.identity == *now)
      return it->second.digest;
  }
  auto computed = digestFile(path);
  if (!computed.ok())
    return computed.error();
  std::lock_guard lock(mutex_);
  known_[path.string()] = *computed;
  return std::move(computed->digest);
}

void addProfileContents(std::vector<std::string>& args, DigestMemo& memo) {
  static constexpr std::string_view kProfileFlags[] = {"-fprofile-instrument-use-path=",
                                                       "-fprofile-sample-use=",
                                                       "-fprofile-remapping-file="};
  std::vector<std::string> contents;
  for (const std::string& arg : args)
    for (std::string_view flag : kProfileFlags)
      if (arg.starts_with(flag)) {
        auto digest = memo.digest(arg.substr(flag.size()));
        contents.push_back(fmt::format("<content of {}>={}", flag.substr(0, flag.size() - 1),
                                       digest.ok() ? *digest : std::string("unreadable")));
      }
  args.insert(args.end(), contents.begin(), contents.end());
}

Result<std::filesystem::path> createTemporary(support::CleanupScope& scope,
                                              const std::filesystem::path& dir,
                                              std::string_view stem) {
  // Made (exclusively) while it is registered, so an interruption never
  // leaves it behind unregistered.
  return scope.createPath([&]() -> Result<std::filesystem::path> {
    std::filesystem::path candidate = dir / fmt::format(".{}.tmp.{}", stem, uniqueSuffix());
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
      return makeError(ErrorCode::kIo, "cannot create cache entry {}: {}", candidate.string(),
                       std::strerror(errno));
    ::close(fd);
    return candidate;
  });
}

void discardTemporary(support::CleanupScope& scope, const std::filesystem::path& temp) {
  std::error_code ignored;
  std::filesystem::remove(temp, ignored);
  scope.removePath(temp);
}

Result<std::filesystem::path> writeTemporary(support::CleanupScope& scope,
                                             const std::filesystem::path& final,
                                             std::string_view text) {
  auto temp = createTemporary(scope, final.parent_path(), final.filename().string());
  if (!temp.ok())
    return temp.error();
  Descriptor fd(::open(temp->c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  size_t written = 0;
  while (fd.get() >= 0 && written < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    written += static_cast<size_t>(n);
  }
  if (written < text.size()) {
    int error = errno;
    discardTemporary(scope, *temp);
    return makeError(ErrorCode::kIo, "cannot write cache entry {}: {}", temp->string(),
                     std::strerror(error));
  }
  return temp;
}

Status commitAll(support::CleanupScope& scope,
                 std::span<const std::pair<std::filesystem::path, std::filesystem::path>> renames) {
  Status committed = scope.commitPaths(renames);
  if (!committed.ok())
    for (const auto& [temp, final] : renames)
      discardTemporary(scope, temp); // Those renamed already are gone: a no-op.
  return committed;
}

} // namespace mlgo::env::detail
