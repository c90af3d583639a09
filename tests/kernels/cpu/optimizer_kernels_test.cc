// Tests of the cpu optimizer kernels (kernels/cpu/optimizer_kernels.cc) against the
// reference kernels at every ISA level: bitwise equal (both update in double and
// round once) for every optimizer and attribute variant, on sizes 1, 3, 17, 1023,
// a zero-size parameter and one large enough to be split over threads.
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
        ExpectCpuMatchesReference("MomentumUpdate", {p, v, g, lr},
                                  {{"momentum", AttrValue::Float(0.9)},
                                   {"nesterov", AttrValue::Int(nesterov)},
                                   {"weight_decay", AttrValue::Float(wd)}},
                                  0);
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
