//===- table/sha256_test.cc - SHA-256 on the CPU's SHA extensions ----------===//
#include "mlgo/table/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace mlgo::table {
namespace {

TEST(Sha256Test, TheCpuExtensionsGiveThePortableDigest) {
  // Every tail length around the one- and two-block padding, and a long buffer.
  std::vector<uint8_t> bytes(1 << 20);
  uint32_t x = 12345;
  for (uint8_t& b : bytes) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  for (size_t n = 0; n <= 200; ++n)
    EXPECT_EQ(sha256(std::span(bytes.data(), n)), sha256Portable(std::span(bytes.data(), n))) << n;
  EXPECT_EQ(sha256(bytes), sha256Portable(bytes));
  std::string abc = "abc";
  auto digest = sha256(std::span(reinterpret_cast<const uint8_t*>(abc.data()), abc.size()));
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[31], 0xad);
  std::printf("sha256: the CPU's SHA extensions %s\n",
              sha256UsesCpuExtensions() ? "used" : "absent (portable code only)");
}

} // namespace
} // namespace mlgo::table
