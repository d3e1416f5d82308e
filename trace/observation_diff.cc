//===- trace/observation_diff.cc - where two observations differ -------------===//
#include "observation_diff.h"

#include <algorithm>
#include <cstring>

namespace mlgo::trace {

std::optional<FeatureDifference> firstDifference(std::span<const protocol::TensorSpec> specs,
                                                 std::span<const std::byte> expected,
                                                 std::span<const std::byte> actual) {
  size_t size = std::min(expected.size(), actual.size());
  if (size == expected.size() && size == actual.size() &&
      std::memcmp(expected.data(), actual.data(), size) == 0)
    return std::nullopt;
  auto mismatch = std::mismatch(expected.begin(), expected.begin() + static_cast<ptrdiff_t>(size),
                                actual.begin());
  uint64_t at = static_cast<uint64_t>(mismatch.first - expected.begin());
  uint64_t offset = 0;
  for (const protocol::TensorSpec& spec : specs) {
    if (at < offset + spec.byteSize()) {
      size_t elementSize = protocol::elementSize(spec.type());
      FeatureDifference diff;
      diff.feature = spec.name();
      diff.element = (at - offset) / elementSize;
      const std::byte* e = expected.data() + offset;
      const std::byte* a = actual.data() + offset;
      protocol::appendElementText(diff.expected, spec.type(), e, diff.element);
      protocol::appendElementText(diff.actual, spec.type(), a, diff.element);
      return diff;
    }
    offset += spec.byteSize();
  }
  FeatureDifference diff;
  diff.feature = "(size)";
  diff.expected = std::to_string(expected.size()) + " bytes";
  diff.actual = std::to_string(actual.size()) + " bytes";
  return diff;
}

} // namespace mlgo::trace
