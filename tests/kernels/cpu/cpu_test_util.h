// Helpers shared by the tests of the optimized CPU kernels (tests/kernels/cpu/**):
// the ISA levels this machine supports, a fixture that runs each test once per ISA
// level (through TESSERA_CPU_ISA), a ParallelFor on real threads, random f32 tensors,
// and the oracle check: the cpu kernel against the reference kernel on the same
// inputs, single- and multi-threaded.
#ifndef TESSERA_TESTS_KERNELS_CPU_CPU_TEST_UTIL_H_
#define TESSERA_TESTS_KERNELS_CPU_CPU_TEST_UTIL_H_

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"

namespace tsr::testing {

// The ISA levels this CPU supports, lowest first.
inline std::vector<CpuIsa> SupportedIsas() {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (SupportedCpuIsa(isa) == isa) isas.push_back(isa);
  }
  return isas;
}

// Runs fn over [0, n) in `chunks` contiguous ranges, each on its own thread: a
// deliberately uneven split that a kernel must produce identical results under.
inline ParallelForFn ThreadedParallelFor(int chunks) {
  return [chunks](int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& fn) {
    std::vector<std::thread> threads;
    const int64_t per = (n + chunks - 1) / chunks;
    for (int64_t begin = 0; begin < n; begin += per) {
      threads.emplace_back([&fn, begin, per, n] { fn(begin, std::min(n, begin + per)); });
    }
    for (std::thread& t : threads) t.join();
  };
}

// An f32 tensor of `shape`, elements uniform in [lo, hi).
inline Tensor RandomF32(std::mt19937& rng, const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DType::kF32, shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : t.flat<float>()) x = dist(rng);
  return t;
}

// Compares two outputs: same dtype and shape; floating values within `tolerance`
// relative (absolute below 1), NaN matching NaN, infinities exactly; other dtypes exactly.
inline void ExpectSameTensor(const Tensor& got, const Tensor& want, double tolerance, absl::string_view what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const bool floating = IsFloating(want.dtype());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double g = got.GetAsDouble(i), w = want.GetAsDouble(i);
    if (!floating || tolerance == 0 || std::isinf(w)) {
      if (std::isnan(w)) {
        ASSERT_TRUE(std::isnan(g)) << what << ": element " << i << " is " << g << ", want NaN";
      } else {
        ASSERT_EQ(g, w) << what << ": element " << i;
      }
    } else if (std::isnan(w)) {
      ASSERT_TRUE(std::isnan(g)) << what << ": element " << i << " is " << g << ", want NaN";
    } else {
      ASSERT_NEAR(g, w, tolerance * std::max(1.0, std::fabs(w))) << what << ": element " << i;
    }
  }
}

// Runs `op` with the reference kernel and with the cpu kernel (which must exist: no
// fallback), single-threaded and split over 3 threads, and expects every output of
// the cpu kernel to match the reference within `tolerance` (see ExpectSameTensor).
inline void ExpectCpuMatchesReference(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                                      const AttrMap& attrs = {}, double tolerance = 1e-5) {
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, attrs, reference);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 3}) {
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    if (threads > 1) cpu.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, attrs, cpu);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      ExpectSameTensor((*got)[o], (*want)[o], tolerance,
                       absl::StrCat(op, " output ", o, " threads=", threads, " isa=", CpuIsaName(ActiveCpuIsa())));
    }
  }
}

// A fixture parameterized by ISA level: each test runs with TESSERA_CPU_ISA capping
// the kernels at that level, and is skipped when the CPU lacks it. Instantiate with
// TSR_INSTANTIATE_FOR_ALL_ISAS(FixtureName).
class CpuIsaTest : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    if (SupportedCpuIsa(GetParam()) != GetParam()) GTEST_SKIP() << "CPU lacks " << CpuIsaName(GetParam());
    ::setenv("TESSERA_CPU_ISA", std::string(CpuIsaName(GetParam())).c_str(), 1);
  }
  void TearDown() override { ::unsetenv("TESSERA_CPU_ISA"); }
};

#define TSR_INSTANTIATE_FOR_ALL_ISAS(fixture)                                                                    \
  INSTANTIATE_TEST_SUITE_P(                                                                                      \
      AllIsas, fixture, ::testing::Values(::tsr::CpuIsa::kScalar, ::tsr::CpuIsa::kAvx2, ::tsr::CpuIsa::kAvx512), \
      [](const ::testing::TestParamInfo<::tsr::CpuIsa>& info) { return std::string(::tsr::CpuIsaName(info.param)); })

// The same over the vector ISA levels only (AVX2, AVX-512), for tests that compare a
// vector path with the portable one (the fixture skips a level the CPU lacks).
#define TSR_INSTANTIATE_FOR_VECTOR_ISAS(fixture)                                            \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      VectorIsas, fixture, ::testing::Values(::tsr::CpuIsa::kAvx2, ::tsr::CpuIsa::kAvx512), \
      [](const ::testing::TestParamInfo<::tsr::CpuIsa>& info) { return std::string(::tsr::CpuIsaName(info.param)); })

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_KERNELS_CPU_CPU_TEST_UTIL_H_
