// CRC32C against published check values (RFC 3720 B.4, the "123456789" check), the
// bitwise definition on random inputs, Extend's concatenation property and masking.
#include "platform/crc32c.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace tsr {
namespace {

// The textbook one-bit-at-a-time CRC32C, the definition the tables must reproduce.
uint32_t BitwiseCrc32c(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char byte : s) {
    c ^= byte;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
  }
  return ~c;
}

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(crc32c::Value(""), 0u);
  EXPECT_EQ(crc32c::Value("a"), 0xC1D04330u);
  EXPECT_EQ(crc32c::Value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c::Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::Value(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc32c::Value(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c::Value(descending), 0x113FDB5Cu);
  // RFC 3720 B.4: an iSCSI read command PDU.
  const unsigned char kRead[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                   0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(crc32c::Value(kRead, sizeof(kRead)), 0xD9963A56u);
}

TEST(Crc32cTest, MatchesBitwiseDefinitionAndExtends) {
  const uint32_t seed = 20261130;
  SCOPED_TRACE(seed);
  std::mt19937 rng(seed);
  for (size_t n : {1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1023, 4099}) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    SCOPED_TRACE(n);
    const uint32_t expected = BitwiseCrc32c(s);
    EXPECT_EQ(crc32c::Value(s), expected);
    // Unaligned starts exercise the byte loop at both ends of the 8-byte loop.
    for (size_t split : {size_t{0}, size_t{1}, n / 3, n / 2, n}) {
      EXPECT_EQ(crc32c::Extend(crc32c::Value(s.data(), split), s.data() + split, n - split), expected);
    }
  }
}

TEST(Crc32cTest, MaskRoundTripsAndChangesTheValue) {
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) {
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(crc)), crc);
    EXPECT_NE(crc32c::Mask(crc), crc);
  }
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, spelled out for one value.
  EXPECT_EQ(crc32c::Mask(0xE3069283u), ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
}

}  // namespace
}  // namespace tsr
