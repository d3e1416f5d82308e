//===- support/fd_budget.cc - file descriptors an environment needs -------===//
#include "mlgo/support/fd_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mlgo::support {

Result<FileLimit> raiseFileLimit() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return makeError(ErrorCode::kIo, "cannot read RLIMIT_NOFILE: {}", std::strerror(errno));
  // More than a million is never needed, and some kernels refuse "infinity".
  rlim_t wanted = std::min<rlim_t>(limit.rlim_max, rlim_t(1) << 20);
  if (limit.rlim_cur < wanted) {
    struct rlimit raised = limit;
    raised.rlim_cur = wanted;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0)
      limit = raised;
  }
  return FileLimit{static_cast<uint64_t>(limit.rlim_cur), static_cast<uint64_t>(limit.rlim_max)};
}

uint64_t descriptorsNeeded(size_t maxEpisodes, unsigned jobs) {
  return kDescriptorReserve + kDescriptorsPerCompile * jobs +
         kDescriptorsPerEpisode * static_cast<uint64_t>(maxEpisodes);
}

size_t episodesCarried(uint64_t limit, unsigned jobs) {
  uint64_t fixed = kDescriptorReserve + kDescriptorsPerCompile * jobs;
  return limit <= fixed ? 0 : static_cast<size_t>((limit - fixed) / kDescriptorsPerEpisode);
}

} // namespace mlgo::support
