// AVX-512F inner loops of the 2-D pooling kernels (compiled with -mavx512f; called only
// when ActiveCpuIsa() allows it): sixteen outputs of one row per step, the strided taps
// picked from whole-vector loads by one two-source permute each.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/pool_rows.h"

namespace tsr {

void MaxPoolRow3Stride2Avx512(const PoolRowSpan& s, float* y) {
  // Per window row, the 33 inputs x[iw0, iw0 + 32] of sixteen outputs: taps iw0 + 2j
  // and iw0 + 2j + 1 are the even and odd lanes of the two loads a, b; tap iw0 + 2j + 2
  // is the even lanes shifted down one, with x[iw0 + 32] last.
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i next = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  for (int64_t step = 0; step < s.n; step += 16) {
    // The last group of sixteen overlaps the previous one when n is not a multiple of
    // 16; the overlapped outputs are computed again, identically.
    const int64_t j = step + 16 <= s.n ? step : s.n - 16;
    const int64_t iw0 = s.iw_first + 2 * j;
    __m512 best = _mm512_setzero_ps();
    for (int64_t i = 0; i < s.kh_count; ++i) {
      // Every tap of the span lies inside the row: x[iw0 + 32] is the last output's last.
      const float* row = s.x + (s.ih_first + i * s.dilation_h) * s.in_w + iw0;
      const __m512 a = _mm512_loadu_ps(row), b = _mm512_loadu_ps(row + 16);
      const __m512 tap0 = _mm512_permutex2var_ps(a, even, b);
      const __m512 tap1 = _mm512_permutex2var_ps(a, odd, b);
      const __m512 tap2 = _mm512_permutex2var_ps(tap0, next, _mm512_set1_ps(row[32]));
      // best, replaced where a tap is strictly greater (MAXPS returns its second operand
      // unless the first is greater): a NaN never replaces, nor is replaced, so the
      // first maximum in row-major tap order wins and a NaN first tap stays.
      best = i == 0 ? tap0 : _mm512_max_ps(tap0, best);
      best = _mm512_max_ps(tap1, best);
      best = _mm512_max_ps(tap2, best);
    }
    _mm512_storeu_ps(y + j, best);
  }
}

}  // namespace tsr
