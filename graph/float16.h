// Storage types for 16-bit floats: IEEE binary16 (`Float16`) and bfloat16
// (`BFloat16`). They hold bits and convert to/from float with round-to-nearest-even;
// arithmetic is done in float by whoever uses them.
#ifndef TESSERA_GRAPH_FLOAT16_H_
#define TESSERA_GRAPH_FLOAT16_H_

#include <cstdint>
#include <cstring>

namespace tsr {

struct Float16 {
  uint16_t bits = 0;

  static Float16 FromBits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  static Float16 FromFloat(float f);
  float ToFloat() const;
  friend bool operator==(Float16 a, Float16 b) { return a.bits == b.bits; }
};

struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  static BFloat16 FromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return FromBits(static_cast<uint16_t>((u >> 16) | 0x40));  // quiet NaN
    uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return FromBits(static_cast<uint16_t>((u + rounding) >> 16));
  }
  float ToFloat() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  friend bool operator==(BFloat16 a, BFloat16 b) { return a.bits == b.bits; }
};

inline Float16 Float16::FromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return FromBits(static_cast<uint16_t>(sign | 0x7e00u));   // NaN
  if (x >= 0x477ff000u) return FromBits(static_cast<uint16_t>(sign | 0x7c00u));  // overflow -> inf
  if (x < 0x38800000u) {                                                         // subnormal or zero
    if (x < 0x33000000u) return FromBits(static_cast<uint16_t>(sign));
    const uint32_t e = x >> 23;
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t half = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return FromBits(static_cast<uint16_t>(sign | half));
  }
  uint32_t half = ((x - 0x38000000u) >> 13);
  const uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return FromBits(static_cast<uint16_t>(sign | half));
}

inline float Float16::ToFloat() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t man = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (man == 0) {
      out = sign;
    } else {  // normalize subnormal
      exp = 113;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      man &= 0x3ffu;
      out = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (man << 13);
  } else {
    out = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace tsr

#endif  // TESSERA_GRAPH_FLOAT16_H_
