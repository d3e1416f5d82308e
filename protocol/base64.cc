//===- protocol/base64.cc - base64 of observation tensors -----------------===//
//
// Every step of a served episode encodes its observation (3.4 KB of regalloc
// tensors) in base64, so the encoder is on the serving path's critical loop.
// Where the CPU has AVX2, 24 input bytes become 32 characters per iteration
// (two 12-byte groups, one per 128-bit lane); elsewhere, and for the tail, a
// portable loop takes six bytes per 8-byte load through a 4,096-pair table.
// (Encoding a short tail through a zero-padded copy with AVX2 was measured:
// it costs more instructions than the portable loop.)
//
//===----------------------------------------------------------------------===//
#include "mlgo/protocol/observation_codec.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mlgo::protocol {
namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The two characters of every 12-bit value: three bytes become two lookups.
constexpr std::array<char, 8192> kBase64Pairs = [] {
  std::array<char, 8192> pairs{};
  for (size_t v = 0; v < 4096; ++v) {
    pairs[2 * v] = kBase64Alphabet[v >> 6];
    pairs[2 * v + 1] = kBase64Alphabet[v & 63];
  }
  return pairs;
}();

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/// Encodes `size` bytes (any length) from `src` to `dst`, padding included.
void encodePortable(const unsigned char* src, size_t size, char* dst) {
  const size_t full = size / 3 * 3;
  size_t i = 0;
  // Six bytes (two groups) per 8-byte load while eight bytes are readable.
  for (; i + 8 <= size; i += 6, dst += 8) {
    uint64_t w;
    std::memcpy(&w, src + i, 8);
    w = __builtin_bswap64(w); // The first byte on top, as base64 reads them.
    std::memcpy(dst, &kBase64Pairs[2 * ((w >> 52) & 4095)], 2);
    std::memcpy(dst + 2, &kBase64Pairs[2 * ((w >> 40) & 4095)], 2);
    std::memcpy(dst + 4, &kBase64Pairs[2 * ((w >> 28) & 4095)], 2);
    std::memcpy(dst + 6, &kBase64Pairs[2 * ((w >> 16) & 4095)], 2);
  }
  for (; i < full; i += 3, dst += 4) {
    uint32_t v = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    std::memcpy(dst, &kBase64Pairs[2 * (v >> 12)], 2);
    std::memcpy(dst + 2, &kBase64Pairs[2 * (v & 4095)], 2);
  }
  size_t rest = size - full;
  if (rest) {
    uint32_t v = uint32_t{src[full]} << 16;
    if (rest == 2)
      v |= uint32_t{src[full + 1]} << 8;
    *dst++ = kBase64Alphabet[v >> 18];
    *dst++ = kBase64Alphabet[(v >> 12) & 63];
    *dst++ = rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    *dst++ = '=';
  }
}

#if defined(__x86_64__)
/// Whether the CPU has AVX2 and the OS saves the YMM registers (what
/// __builtin_cpu_supports("avx2") answers), asked once. The builtin would
/// link libgcc's CPU model, whose constructor runs a few dozen CPUID
/// instructions when any program linking this file starts: about 90 us per
/// start of mlgo-env-launch on this virtual machine, where CPUID traps
/// (docs/launch.md).
bool cpuHasAvx2() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1) || !((c >> 28) & 1))
    return false; // no OSXSAVE or no AVX
  unsigned low = 0, high = 0;
  __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  (void)high;
  if ((low & 6) != 6)
    return false; // the OS does not save XMM and YMM state
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((b >> 5) & 1);
}

/// Encodes whole 24-byte blocks while 28 bytes are readable (each lane loads
/// 16 and uses 12); returns the bytes consumed. Per 32-bit group of a lane:
/// gather its three bytes as (b1 b0 b2 b1), cut out the four 6-bit indices with
/// two 16-bit multiplies, then map each index to its character by adding the
/// distance from its range's first index to that range's first character.
__attribute__((target("avx2"))) size_t encodeAvx2(const unsigned char* src, size_t size,
                                                   char* dst) {
  const __m256i gather = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
                                          1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  const __m256i highMask = _mm256_set1_epi32(0x0fc0fc00);
  const __m256i highShift = _mm256_set1_epi32(0x04000040);
  const __m256i lowMask = _mm256_set1_epi32(0x003f03f0);
  const __m256i lowShift = _mm256_set1_epi32(0x01000010);
  // Offsets by range: 0 -> lower case (26..51), 1..10 -> digits, 11 '+', 12 '/',
  // 13 -> upper case (0..25).
  const __m256i offsets = _mm256_setr_epi8(
      'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
      '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0, //
      'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
      '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
  size_t i = 0;
  for (; i + 28 <= size; i += 24, dst += 32) {
    __m256i in = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 12)), 1);
    in = _mm256_shuffle_epi8(in, gather);
    __m256i high = _mm256_mulhi_epu16(_mm256_and_si256(in, highMask), highShift);
    __m256i low = _mm256_mullo_epi16(_mm256_and_si256(in, lowMask), lowShift);
    __m256i index = _mm256_or_si256(high, low);
    __m256i range = _mm256_subs_epu8(index, _mm256_set1_epi8(51));
    __m256i upper = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), index);
    range = _mm256_or_si256(range, _mm256_and_si256(upper, _mm256_set1_epi8(13)));
    __m256i text = _mm256_add_epi8(index, _mm256_shuffle_epi8(offsets, range));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), text);
  }
  return i;
}
#endif

} // namespace

namespace detail {
void appendBase64Portable(std::string& out, std::span<const std::byte> bytes) {
  size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4);
  encodePortable(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                 out.data() + start);
}
} // namespace detail

void appendBase64(std::string& out, std::span<const std::byte> bytes) {
  size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4);
  encodeBase64(bytes, out.data() + start);
}

char* encodeBase64(std::span<const std::byte> bytes, char* dst) {
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t done = 0;
#if defined(__x86_64__)
  static const bool avx2 = cpuHasAvx2(); // a property of the machine
  if (bytes.size() >= 28 && avx2)
    done = encodeAvx2(src, bytes.size(), dst);
#endif
  encodePortable(src + done, bytes.size() - done, dst + done / 3 * 4);
  return dst + (bytes.size() + 2) / 3 * 4;
}

Result<std::vector<std::byte>> decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return makeError(ErrorCode::kInvalidArgument, "base64: length {} is not a multiple of 4",
                     text.size());
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad || (v[k] = base64Value(c)) < 0)
        return makeError(ErrorCode::kInvalidArgument, "base64: invalid character at {}", i + k);
    }
    uint32_t word = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) |
                    uint32_t(v[3]);
    out.push_back(std::byte(word >> 16));
    if (pad < 2)
      out.push_back(std::byte((word >> 8) & 0xff));
    if (pad < 1)
      out.push_back(std::byte(word & 0xff));
  }
  return out;
}

} // namespace mlgo::protocol
