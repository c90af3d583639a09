// Tests of the cpu Softmax/LogSoftmax kernels (kernels/cpu/softmax_kernels.cc) against
// the reference at every ISA level: every axis (negative ones too) of ranks 1..4, rows
// of 1, 3, 17 (the short-row path, up to 32) and 1023, zero-size dimensions, large and infinite values and NaN, and
// in-place execution.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;
using testing::ThreadedParallelFor;

constexpr double kTolerance = 1e-6;

class SoftmaxTest : public CpuIsaTest {};

TEST_P(SoftmaxTest, EveryAxis) {
  uint32_t seed = 30;
  for (const Shape& shape : {Shape{1}, Shape{3}, Shape{17}, Shape{1023}, Shape{3, 17}, Shape{17, 3}, Shape{2, 3, 4, 5},
                             Shape{2, 1023, 2}, Shape{0, 5}, Shape{5, 0}, Shape{4, 1, 9}}) {
    for (int64_t axis = -shape.rank(); axis < shape.rank(); ++axis) {
      ++seed;
      SCOPED_TRACE(absl::StrCat("seed=", seed, " shape=", shape.ToString(), " axis=", axis));
      std::mt19937 rng(seed);
      const Tensor x = RandomF32(rng, shape, -20.0f, 20.0f);
      for (const char* op : {"Softmax", "LogSoftmax"}) {
        SCOPED_TRACE(op);
        ExpectCpuMatchesReference(op, {x}, {{"axis", AttrValue::Int(axis)}}, kTolerance);
      }
    }
  }
}

TEST_P(SoftmaxTest, DefaultAxisAndLargeValues) {
  std::mt19937 rng(40);
  SCOPED_TRACE("seed=40");
  // Values far beyond exp's range: the max shift keeps everything finite.
  const Tensor x = RandomF32(rng, Shape{4, 37}, -1e30f, 1e30f);
  const Tensor y = RandomF32(rng, Shape{3, 17, 5}, 80.0f, 120.0f);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    ExpectCpuMatchesReference(op, {x}, {}, kTolerance);
    ExpectCpuMatchesReference(op, {y}, {}, kTolerance);
    ExpectCpuMatchesReference(op, {y}, {{"axis", AttrValue::Int(1)}}, kTolerance);
  }
}

// Rows with -inf, +inf or NaN give what the reference gives (0, NaN rows...).
TEST_P(SoftmaxTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>(Shape{5, 4}, {
                                                              1.0f, -inf,  2.0f, -inf,  // some -inf: they get 0
                                                              -inf, -inf,  -inf, -inf,  // all -inf: NaN
                                                              1.0f, inf,   2.0f, 3.0f,  // +inf: NaN
                                                              1.0f, nan,   2.0f, 3.0f,  // NaN: NaN
                                                              0.0f, -0.0f, 0.0f, 0.0f,
                                                          });
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(op, " axis=", axis));
      ExpectCpuMatchesReference(op, {x}, {{"axis", AttrValue::Int(axis)}}, kTolerance);
    }
  }
}

TEST_P(SoftmaxTest, InPlace) {
  std::mt19937 rng(50);
  SCOPED_TRACE("seed=50");
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  for (const Shape& shape : {Shape{6, 1023}, Shape{3, 40, 17}}) {
    const Tensor x = RandomF32(rng, shape, -10.0f, 10.0f);
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      for (int64_t axis : {-1, 1}) {
        SCOPED_TRACE(absl::StrCat(op, " axis=", axis, " shape=", shape.ToString()));
        const AttrMap attrs = {{"axis", AttrValue::Int(axis)}};
        const Tensor want = RunOp(op, {x}, attrs, cpu)->at(0);
        Tensor y = x.Clone();
        const OpDef* def = *OpRegistry::Global().Lookup(op);
        const KernelFn* fn = KernelRegistry::Global().Find(op, kCpuDevice, DType::kF32);
        ASSERT_NE(fn, nullptr);
        KernelContext ctx(*def, "in_place", attrs, {&y}, {&y});
        ctx.set_parallel_for(ThreadedParallelFor(3));
        ASSERT_TRUE((*fn)(ctx).ok());
        EXPECT_TRUE(y.BitwiseEquals(want));
      }
    }
  }
}

TEST_P(SoftmaxTest, RejectsBadAxis) {
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  const OpDef* def = *OpRegistry::Global().Lookup("Softmax");
  const KernelFn* fn = KernelRegistry::Global().Find("Softmax", kCpuDevice, DType::kF32);
  ASSERT_NE(fn, nullptr);
  Tensor x(DType::kF32, Shape{2, 3});
  Tensor y(DType::kF32, Shape{2, 3});
  KernelContext ctx(*def, "softmax", {{"axis", AttrValue::Int(2)}}, {&x}, {&y});
  EXPECT_FALSE((*fn)(ctx).ok());
}

TSR_INSTANTIATE_FOR_ALL_ISAS(SoftmaxTest);

}  // namespace
}  // namespace tsr
