// One channel block (sixteen floats, conv_blocked.h) as a vector value, for the
// channel-blocked kernels written once over the ISA (conv_blocked_*_simd.h): one
// __m512 in AVX-512, a pair of __m256 in AVX2. Every operation is lane by lane, and
// the same on both (each multiply-add fused), so the kernels' floats do not depend
// on the ISA.
//
// Included ONLY by the per-ISA files (*_avx2.cc, *_avx512.cc): everything here has
// internal linkage (anonymous namespace), and each traits type is defined only where
// the file's flags enable its ISA (see gemm_microkernel_simd.h).
//
// Traits V provide: Vec (sixteen floats); Bcast (one float in every lane, a
// multiplier of a Vec); Mask (which lanes a store keeps); kRegisters (vector
// registers) and kRegsPerVec (registers per Vec); Load(p) (64-byte aligned);
// LoadU(p); StoreU(p, v); Zero(); Set1(x); Broadcast(x); Fma(w, v, acc) = w * v + acc
// with v a Bcast, FmaV the same with v a Vec; Add; Sub; Mul; Relu(v) = v < 0 ? 0 : v;
// Clip(v, lo, hi) = min(hi, max(lo, v)) (NaN passes through); FirstLanes(n) (n in
// [0, 16]); StoreZeroing(p, v, mask): v with the lanes outside mask as +0. ClampBlock<V>
// applies a BlockedDirectClamp with them.
#ifndef TESSERA_KERNELS_CPU_CHANNEL_BLOCK_SIMD_H_
#define TESSERA_KERNELS_CPU_CHANNEL_BLOCK_SIMD_H_

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/conv_blocked_direct_row.h"

namespace tsr {
namespace {

#if defined(__AVX512F__)
// GCC 12 reports _mm512_max_ps's and _mm512_min_ps's _mm512_undefined_ps() (a self-
// initialized "don't care" source) as maybe uninitialized once inlined through Clip.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
struct Avx512Block {
  using Vec = __m512;
  using Bcast = __m512;
  using Mask = __mmask16;
  static constexpr int kRegisters = 32;
  static constexpr int kRegsPerVec = 1;

  static inline Vec Load(const float* p) { return _mm512_load_ps(p); }
  static inline Vec LoadU(const float* p) { return _mm512_loadu_ps(p); }
  static inline void StoreU(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static inline Vec Zero() { return _mm512_setzero_ps(); }
  static inline Vec Set1(float x) { return _mm512_set1_ps(x); }
  static inline Bcast Broadcast(float x) { return _mm512_set1_ps(x); }
  static inline Vec Fma(Vec w, Bcast v, Vec acc) { return _mm512_fmadd_ps(w, v, acc); }
  static inline Vec FmaV(Vec w, Vec v, Vec acc) { return _mm512_fmadd_ps(w, v, acc); }
  static inline Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static inline Vec Sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static inline Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static inline Vec Relu(Vec v) {
    return _mm512_maskz_mov_ps(static_cast<__mmask16>(~_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ)), v);
  }
  static inline Vec Clip(Vec v, Vec lo, Vec hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }
  static inline Mask FirstLanes(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static inline void StoreZeroing(float* p, Vec v, Mask mask) { _mm512_storeu_ps(p, _mm512_maskz_mov_ps(mask, v)); }
};
#pragma GCC diagnostic pop
#endif  // __AVX512F__

#if defined(__AVX2__) && defined(__FMA__)
// The low eight lanes of a channel block whose lanes past 8 are all padding (the last
// block of 1 to 8 channels, e.g. 24 = 16 + 8): the multiply-adds of the zero lanes
// skipped. The block's memory layout stays sixteen floats per vector (addresses as for
// Avx2Block); StoreZeroing writes all sixteen, the high eight as zeros. Its lane-wise
// operations are Avx2Block's on each half.
struct Avx2HalfBlock {
  using Vec = __m256;
  using Bcast = __m256;
  using Mask = __m256;  // all-ones lanes where kept
  static constexpr int kRegisters = 16;
  static constexpr int kRegsPerVec = 1;

  static inline Vec Load(const float* p) { return _mm256_load_ps(p); }
  static inline Vec LoadU(const float* p) { return _mm256_loadu_ps(p); }
  static inline Vec Zero() { return _mm256_setzero_ps(); }
  static inline Vec Set1(float x) { return _mm256_set1_ps(x); }
  static inline Bcast Broadcast(float x) { return _mm256_set1_ps(x); }
  static inline Vec Fma(Vec w, Bcast v, Vec acc) { return _mm256_fmadd_ps(w, v, acc); }
  static inline Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static inline Vec Sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static inline Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static inline Vec Relu(Vec v) { return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v); }
  static inline Vec Clip(Vec v, Vec lo, Vec hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }
  // n may be < 0 (no lane) or > 8 (all).
  static inline Mask FirstLanes(int64_t n) {
    const int count = static_cast<int>(n < 0 ? 0 : n < 8 ? n : 8);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
  }
  static inline void StoreZeroing(float* p, Vec v, Mask mask) {
    _mm256_storeu_ps(p, _mm256_and_ps(v, mask));
    _mm256_storeu_ps(p + 8, _mm256_setzero_ps());
  }
};

struct Avx2Block {
  using Half = Avx2HalfBlock;
  struct Vec {
    __m256 lo, hi;
  };
  using Bcast = __m256;
  using Mask = Vec;  // all-ones lanes where kept
  static constexpr int kRegisters = 16;
  static constexpr int kRegsPerVec = 2;

  static inline Vec Load(const float* p) { return {Half::Load(p), Half::Load(p + 8)}; }
  static inline Vec LoadU(const float* p) { return {Half::LoadU(p), Half::LoadU(p + 8)}; }
  static inline void StoreU(float* p, Vec v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static inline Vec Zero() { return {Half::Zero(), Half::Zero()}; }
  static inline Vec Set1(float x) { return {Half::Set1(x), Half::Set1(x)}; }
  static inline Bcast Broadcast(float x) { return _mm256_set1_ps(x); }
  static inline Vec Fma(Vec w, Bcast v, Vec acc) { return {Half::Fma(w.lo, v, acc.lo), Half::Fma(w.hi, v, acc.hi)}; }
  static inline Vec FmaV(Vec w, Vec v, Vec acc) {
    return {Half::Fma(w.lo, v.lo, acc.lo), Half::Fma(w.hi, v.hi, acc.hi)};
  }
  static inline Vec Add(Vec a, Vec b) { return {Half::Add(a.lo, b.lo), Half::Add(a.hi, b.hi)}; }
  static inline Vec Sub(Vec a, Vec b) { return {Half::Sub(a.lo, b.lo), Half::Sub(a.hi, b.hi)}; }
  static inline Vec Mul(Vec a, Vec b) { return {Half::Mul(a.lo, b.lo), Half::Mul(a.hi, b.hi)}; }
  static inline Vec Relu(Vec v) { return {Half::Relu(v.lo), Half::Relu(v.hi)}; }
  static inline Vec Clip(Vec v, Vec lo, Vec hi) {
    return {Half::Clip(v.lo, lo.lo, hi.lo), Half::Clip(v.hi, lo.hi, hi.hi)};
  }
  static inline Mask FirstLanes(int64_t n) { return {Half::FirstLanes(n), Half::FirstLanes(n - 8)}; }
  static inline void StoreZeroing(float* p, Vec v, Mask mask) {
    _mm256_storeu_ps(p, _mm256_and_ps(v.lo, mask.lo));
    _mm256_storeu_ps(p + 8, _mm256_and_ps(v.hi, mask.hi));
  }
};
#endif  // __AVX2__ && __FMA__

// `clamp` (conv_blocked_direct_row.h) on a vector, as the blocked kernels apply it to
// their sums before they store them.
template <class V>
inline typename V::Vec ClampBlock(BlockedDirectClamp clamp, typename V::Vec v, typename V::Vec lo, typename V::Vec hi) {
  if (clamp == BlockedDirectClamp::kRelu) return V::Relu(v);
  if (clamp == BlockedDirectClamp::kClip) return V::Clip(v, lo, hi);
  return v;
}

}  // namespace
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CHANNEL_BLOCK_SIMD_H_
