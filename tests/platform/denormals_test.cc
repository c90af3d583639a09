// Tests of ScopedFlushDenormals (platform/denormals.h): denormal inputs and results are
// zero inside the scope (x86), the thread's previous mode comes back after it, and
// scopes nest.
#include "platform/denormals.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace tsr {
namespace {

// Multiplies through a volatile so that the compiler cannot fold it at build time.
float Times(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

constexpr float kDenormal = std::numeric_limits<float>::denorm_min() * 1000;

TEST(DenormalsTest, FlushedInsideTheScopeOnlyAndScopesNest) {
#if defined(__x86_64__) || defined(__i386__)
  ASSERT_EQ(std::fpclassify(kDenormal), FP_SUBNORMAL);
  EXPECT_EQ(Times(kDenormal, 1.0f), kDenormal);                     // outside: kept
  EXPECT_EQ(std::fpclassify(Times(1e-30f, 1e-10f)), FP_SUBNORMAL);  // a denormal result
  {
    const ScopedFlushDenormals flush;
    EXPECT_EQ(Times(kDenormal, 1.0f), 0.0f);         // a denormal input reads as zero
    EXPECT_EQ(Times(1e-30f, 1e-10f), 0.0f);          // a denormal result flushes to zero
    EXPECT_FLOAT_EQ(Times(1e-20f, 1e-10f), 1e-30f);  // normal numbers unchanged
    {
      const ScopedFlushDenormals nested;
      EXPECT_EQ(Times(kDenormal, 1.0f), 0.0f);
    }
    EXPECT_EQ(Times(kDenormal, 1.0f), 0.0f);  // the outer scope's mode is still on
  }
  EXPECT_EQ(Times(kDenormal, 1.0f), kDenormal);  // restored
#else
  GTEST_SKIP() << "flushing denormals is implemented for x86 only";
#endif
}

}  // namespace
}  // namespace tsr
