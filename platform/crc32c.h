// CRC32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum
// TensorFlow uses for TFRecord framing and checkpoints, plus TFRecord's masking.
// Table-driven, slicing-by-8; portable (no SSE4.2 instruction).
#ifndef TESSERA_PLATFORM_CRC32C_H_
#define TESSERA_PLATFORM_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace tsr::crc32c {

// The CRC32C of data[0, n) appended to a stream whose CRC32C so far is `crc`
// (0 for an empty stream): Extend(Extend(0, a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(absl::string_view bytes) { return Extend(0, bytes.data(), bytes.size()); }

// TFRecord stores masked CRCs: the CRC of a string that itself contains CRCs is
// poorly distributed, so the stored value is rotated and offset.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace tsr::crc32c

#endif  // TESSERA_PLATFORM_CRC32C_H_
