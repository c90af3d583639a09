// ScopedFlushDenormals: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
#include "platform/denormals.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define TSR_HAS_MXCSR 1
#endif

namespace tsr {

#ifdef TSR_HAS_MXCSR
namespace {
constexpr unsigned kFlushToZero = 0x8000;
constexpr unsigned kDenormalsAreZero = 0x0040;
}  // namespace

ScopedFlushDenormals::ScopedFlushDenormals() : saved_(_mm_getcsr()) {
  _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
}
ScopedFlushDenormals::~ScopedFlushDenormals() { _mm_setcsr(saved_); }
void FlushDenormalsOnThisThread() { _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero); }
#else
ScopedFlushDenormals::ScopedFlushDenormals() = default;
ScopedFlushDenormals::~ScopedFlushDenormals() = default;
void FlushDenormalsOnThisThread() {}
#endif

}  // namespace tsr
