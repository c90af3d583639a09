// Tests of the reference activation kernels (kernels/reference/activation_kernels.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::AcceptedDTypes;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;
using ::tsr::testing::RunOne;

TEST(ActivationKernelsTest, RegisteredForEveryAcceptedDType) {
  for (const char* op : {"Relu", "LeakyRelu", "Gelu", "Sigmoid", "Tanh", "Erf", "Softplus", "Silu"}) {
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), AcceptedDTypes(op)) << op;
  }
}

TEST(ActivationKernelsTest, Relu) {
  for (DType dtype : kSignedDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectValues(RunOne("Relu", {Make(dtype, Shape{2, 2}, {-3, 0, 2, -1})}), {0, 0, 2, 0});
  }
  ExpectValues(RunOne("Relu", {Make(DType::kF32, Shape{3}, {kNaN, -kInf, kInf})}), {kNaN, 0, kInf});
  EXPECT_EQ(RunOne("Relu", {Tensor(DType::kF32, Shape{0, 2})}).shape(), (Shape{0, 2}));
}

TEST(ActivationKernelsTest, LeakyRelu) {
  ExpectValues(RunOne("LeakyRelu", {Make(DType::kF64, Shape{3}, {-2, 0, 3})}), {-0.02, 0, 3});
  ExpectValues(RunOne("LeakyRelu", {Make(DType::kF32, Shape{2}, {-2, 4})}, {{"alpha", AttrValue::Float(0.5)}}),
               {-1, 4});
  ExpectValues(RunOne("LeakyRelu", {Make(DType::kF16, Shape{2}, {-4, kNaN})}, {{"alpha", AttrValue::Float(0.25)}}),
               {-1, kNaN});
}

TEST(ActivationKernelsTest, GeluBothForms) {
  // Hand values: Phi(1) = 0.841344746068543, Phi(-1) = 0.158655253931457.
  ExpectValues(RunOne("Gelu", {Make(DType::kF64, Shape{4}, {0, 1, -1, 20})}),
               {0, 0.841344746068543, -0.158655253931457, 20}, 1e-14);
  // tanh form at 1: 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.8411919906082768.
  ExpectValues(RunOne("Gelu", {Make(DType::kF64, Shape{3}, {0, 1, -20})}, {{"approximate", AttrValue::String("tanh")}}),
               {0, 0.8411919906082768, 0}, 1e-14);
  ExpectValues(RunOne("Gelu", {Make(DType::kBF16, Shape{1}, {1})}), {0.83984375});  // 0.8413 rounded to bf16
}

TEST(ActivationKernelsTest, SigmoidStableAtExtremes) {
  ExpectValues(RunOne("Sigmoid", {Make(DType::kF64, Shape{5}, {0, 100, -100, 1, -800})}),
               {0.5, 1, 3.7200759760208356e-44, 0.7310585786300049, 0}, 1e-15);
  Tensor f32 = RunOne("Sigmoid", {Make(DType::kF32, Shape{4}, {100, -100, kInf, -kInf})});
  // sigmoid(-100) = 3.72e-44 is an f32 subnormal, not 0.
  ExpectValues(f32, {1, static_cast<float>(3.7200759760208356e-44), 1, 0});
  ExpectValues(RunOne("Sigmoid", {Make(DType::kF32, Shape{1}, {kNaN})}), {kNaN});
}

TEST(ActivationKernelsTest, SoftplusStableAtExtremes) {
  ExpectValues(RunOne("Softplus", {Make(DType::kF64, Shape{5}, {0, 100, -100, 1000, -1000})}),
               {std::log(2.0), 100, 3.720075976020836e-44, 1000, 0}, 1e-15);
  ExpectValues(RunOne("Softplus", {Make(DType::kF32, Shape{3}, {100, -100, kInf})}),
               {100, static_cast<float>(3.720075976020836e-44), kInf});
  ExpectValues(RunOne("Softplus", {Make(DType::kF16, Shape{2}, {kNaN, -kInf})}), {kNaN, 0});
}

TEST(ActivationKernelsTest, TanhErfSilu) {
  ExpectValues(RunOne("Tanh", {Make(DType::kF64, Shape{4}, {0, 1, -1, 100})}),
               {0, 0.7615941559557649, -0.7615941559557649, 1}, 1e-15);
  ExpectValues(RunOne("Erf", {Make(DType::kF64, Shape{4}, {0, 1, -1, 10})}),
               {0, 0.8427007929497149, -0.8427007929497149, 1}, 1e-15);
  ExpectValues(RunOne("Silu", {Make(DType::kF64, Shape{4}, {0, 1, -100, 100})}),
               {0, 0.7310585786300049, -3.7200759760208356e-42, 100}, 1e-14);
  ExpectValues(RunOne("Silu", {Make(DType::kF32, Shape{2}, {-1000, 1000})}), {0, 1000});
}

TEST(ActivationKernelsTest, HalfTypesRoundOnce) {
  // tanh(0.5) = 0.46211715726; nearest f16 is 0.462158203125 (1893/4096).
  ExpectValues(RunOne("Tanh", {Make(DType::kF16, Shape{1}, {0.5})}), {0.462158203125});
  ExpectValues(RunOne("Sigmoid", {Make(DType::kBF16, Shape{2}, {0, 100})}), {0.5, 1});
}

}  // namespace
}  // namespace tsr
