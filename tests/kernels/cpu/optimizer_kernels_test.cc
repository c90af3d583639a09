// Tests of the cpu optimizer kernels (kernels/cpu/optimizer_kernels.cc) against the
// reference kernels at every ISA level, for every optimizer and attribute variant, on
// sizes 1, 3, 17, 1023, a zero-size parameter and one large enough to be split over
// threads: SGD, Adam and RMSProp bitwise equal (both update in double and round once);
// momentum, which updates in f32 with fused multiply-adds, within 3e-7 (about two ulps of
// values near 1) of the reference and bitwise equal to the same f32 steps written here
// with std::fma, so every ISA gives the same bits.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

class OptimizerKernelsTest : public CpuIsaTest {};

// The cpu MomentumUpdate gives exactly these f32 steps, one rounding each, at every ISA
// and thread count.
void ExpectMomentumInF32(const Tensor& p, const Tensor& v, const Tensor& g, float lr, float mu, float wd, bool nesterov,
                         const AttrMap& attrs) {
  for (int threads : {1, 3}) {
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    if (threads > 1) cpu.parallel_for = testing::ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp("MomentumUpdate", {p, v, g, Tensor::Scalar(lr)}, attrs, cpu);
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t i = 0; i < p.num_elements(); ++i) {
      const float pi = p.data<float>()[i];
      const float gi = std::fma(wd, pi, g.data<float>()[i]);
      const float vi = std::fma(mu, v.data<float>()[i], gi);
      const float new_p = std::fma(-lr, nesterov ? std::fma(mu, vi, gi) : vi, pi);
      ASSERT_EQ((*got)[1].data<float>()[i], vi) << "velocity element " << i << " threads=" << threads;
      ASSERT_EQ((*got)[0].data<float>()[i], new_p) << "parameter element " << i << " threads=" << threads;
    }
  }
}

const Shape kShapes[] = {Shape({1}), Shape({3}), Shape({17, 1}), Shape({1023}), Shape({0, 4}), Shape({256, 300})};

TEST_P(OptimizerKernelsTest, SgdAndMomentum) {
  uint32_t seed = 7100;
  for (const Shape& shape : kShapes) {
    for (double wd : {0.0, 1e-2}) {
      SCOPED_TRACE(absl::StrCat(shape.ToString(), " wd=", wd, " seed=", seed));
      std::mt19937 rng(seed++);
      const Tensor p = RandomF32(rng, shape), v = RandomF32(rng, shape), g = RandomF32(rng, shape);
      const Tensor lr = Tensor::Scalar(0.05f);
      ExpectCpuMatchesReference("SGDUpdate", {p, g, lr}, {{"weight_decay", AttrValue::Float(wd)}}, 0);
      for (int nesterov : {0, 1}) {
        const AttrMap attrs = {{"momentum", AttrValue::Float(0.9)},
                               {"nesterov", AttrValue::Int(nesterov)},
                               {"weight_decay", AttrValue::Float(wd)}};
        ExpectCpuMatchesReference("MomentumUpdate", {p, v, g, lr}, attrs, 3e-7);
        ExpectMomentumInF32(p, v, g, 0.05f, 0.9f, static_cast<float>(wd), nesterov == 1, attrs);
      }
    }
  }
}

TEST_P(OptimizerKernelsTest, AdamAndRmsProp) {
  uint32_t seed = 7200;
  for (const Shape& shape : kShapes) {
    for (double wd : {0.0, 1e-2}) {
      SCOPED_TRACE(absl::StrCat(shape.ToString(), " wd=", wd, " seed=", seed));
      std::mt19937 rng(seed++);
      const Tensor p = RandomF32(rng, shape), m = RandomF32(rng, shape), g = RandomF32(rng, shape);
      const Tensor v = RandomF32(rng, shape, 0.0f, 1.0f);  // second moments are non-negative
      const Tensor lr = Tensor::Scalar(1e-3f);
      for (int64_t step : {0, 41}) {
        for (int decoupled : {0, 1}) {
          ExpectCpuMatchesReference("AdamUpdate", {p, m, v, g, lr, Tensor::Scalar(step)},
                                    {{"beta1", AttrValue::Float(0.9)},
                                     {"beta2", AttrValue::Float(0.999)},
                                     {"epsilon", AttrValue::Float(1e-8)},
                                     {"weight_decay", AttrValue::Float(wd)},
                                     {"decoupled_weight_decay", AttrValue::Int(decoupled)}},
                                    0);
        }
      }
      ExpectCpuMatchesReference(
          "RMSPropUpdate", {p, v, g, lr},
          {{"rho", AttrValue::Float(0.9)}, {"epsilon", AttrValue::Float(1e-7)}, {"weight_decay", AttrValue::Float(wd)}},
          0);
    }
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(OptimizerKernelsTest);

}  // namespace
}  // namespace tsr
