// Tests of Philox4x32-10 (kernels/reference/philox.h) and the reference Dropout kernel.
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
#include "kernels/reference/philox.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::AcceptedDTypes;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;

// Random123's published known-answer vectors (tests/kat_vectors) for philox4x32 10.
TEST(PhiloxTest, Random123KnownAnswers) {
  using reference::Philox4x32_10;
  EXPECT_EQ(Philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (reference::PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (reference::PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (reference::PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

struct DropoutResult {
  Tensor output;
  Tensor mask;
};

DropoutResult RunDropout(const std::vector<std::optional<Tensor>>& inputs, uint64_t seed, uint64_t step,
                         const AttrMap& attrs = {}) {
  RunOpOptions options;
  options.seed = seed;
  options.step = step;
  absl::StatusOr<std::vector<Tensor>> out = RunOp("Dropout", inputs, attrs, options);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 2) return {};
  return {(*out)[0], (*out)[1]};
}

TEST(DropoutKernelTest, RegisteredForEveryAcceptedDType) {
  EXPECT_EQ(KernelRegistry::Global().DTypesFor("Dropout", kReferenceDevice), AcceptedDTypes("Dropout"));
}

TEST(DropoutKernelTest, InferenceIsIdentityWithFullMask) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 3}, {1, -2, 3, kNaN, 5, 0});
    for (bool explicit_false : {false, true}) {
      std::vector<std::optional<Tensor>> inputs = {x};
      if (explicit_false) inputs = {x, Make(dtype, Shape{}, {0.9}), Tensor::Scalar<bool>(false)};
      DropoutResult r = RunDropout(inputs, 1, 2);
      EXPECT_TRUE(r.output.BitwiseEquals(x));
      ExpectValues(r.mask, {1, 1, 1, 1, 1, 1});
    }
  }
}

TEST(DropoutKernelTest, TrainingZeroesAndScales) {
  const uint64_t seed = 1234;
  SCOPED_TRACE(seed);
  const int64_t n = 10000;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 1 + i % 7;
  for (DType dtype : {DType::kF32, DType::kF64}) {
    SCOPED_TRACE(DTypeName(dtype));
    for (double ratio : {0.5, 0.2}) {
      SCOPED_TRACE(ratio);
      DropoutResult r = RunDropout(
          {Make(dtype, Shape{n}, v), Make(DType::kF32, Shape{}, {ratio}), Tensor::Scalar<bool>(true)}, seed, 0);
      int64_t kept = 0;
      for (int64_t i = 0; i < n; ++i) {
        const bool keep = r.mask.data<bool>()[i];
        kept += keep;
        const double expected = keep ? v[i] / (1 - static_cast<double>(static_cast<float>(ratio))) : 0.0;
        EXPECT_NEAR(r.output.GetAsDouble(i), expected, 1e-5 * expected) << i;
      }
      // Binomial(10000, 1 - ratio): 5 standard deviations are under 0.025.
      EXPECT_NEAR(static_cast<double>(kept) / n, 1 - ratio, 0.025);
    }
  }
}

TEST(DropoutKernelTest, StreamDependsOnSeedStepAndNodeOnly) {
  const Tensor x = Make(DType::kF32, Shape{257}, std::vector<double>(257, 1.0));
  const std::vector<std::optional<Tensor>> inputs = {x, Tensor::Scalar<float>(0.5f), Tensor::Scalar<bool>(true)};
  const Tensor a = RunDropout(inputs, 7, 3).mask;
  EXPECT_TRUE(RunDropout(inputs, 7, 3).mask.BitwiseEquals(a));
  EXPECT_FALSE(RunDropout(inputs, 7, 4).mask.BitwiseEquals(a));
  EXPECT_FALSE(RunDropout(inputs, 8, 3).mask.BitwiseEquals(a));
  // The node's 'seed' attribute replaces the run's seed.
  const AttrMap pinned = {{"seed", AttrValue::Int(99)}};
  EXPECT_TRUE(RunDropout(inputs, 1, 3, pinned).mask.BitwiseEquals(RunDropout(inputs, 2, 3, pinned).mask));
  EXPECT_FALSE(RunDropout(inputs, 1, 3, pinned).mask.BitwiseEquals(a));
}

// A device holding rows [r0, r1) of a [rows, cols] tensor draws with element_offset
// r0 * cols exactly the whole tensor's mask for those rows (offsets not a multiple of 4
// start inside a Philox block).
TEST(DropoutKernelTest, ElementOffsetDrawsTheWholeTensorsRows) {
  const int64_t rows = 9, cols = 7;
  const Tensor whole = Make(DType::kF32, Shape{rows, cols}, std::vector<double>(rows * cols, 1.0));
  const Tensor ratio = Tensor::Scalar<float>(0.5f), training = Tensor::Scalar<bool>(true);
  const Tensor all = RunDropout({whole, ratio, training}, 5, 2).mask;
  for (auto [r0, r1] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 9}, {3, 5}}) {
    const Tensor part = Make(DType::kF32, Shape{r1 - r0, cols}, std::vector<double>((r1 - r0) * cols, 1.0));
    const Tensor mask = RunDropout({part, ratio, training}, 5, 2, {{"element_offset", AttrValue::Int(r0 * cols)}}).mask;
    for (int64_t i = 0; i < mask.num_elements(); ++i) {
      ASSERT_EQ(mask.data<bool>()[i], all.data<bool>()[r0 * cols + i])
          << "rows " << r0 << ".." << r1 << " element " << i;
    }
  }
}

TEST(DropoutKernelTest, RatioZeroKeepsEverythingAndHalfTypesWork) {
  const Tensor x = Make(DType::kBF16, Shape{64}, std::vector<double>(64, 3.0));
  DropoutResult r = RunDropout({x, Make(DType::kF16, Shape{1}, {0}), Make(DType::kBool, Shape{1}, {1})}, 5, 0);
  EXPECT_TRUE(r.output.BitwiseEquals(x));
  ExpectValues(r.mask, std::vector<double>(64, 1.0));
  DropoutResult h = RunDropout({Make(DType::kF16, Shape{64}, std::vector<double>(64, 3.0)),
                                Make(DType::kF16, Shape{}, {0.75}), Tensor::Scalar<bool>(true)},
                               5, 0);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(h.output.GetAsDouble(i), h.mask.data<bool>()[i] ? 12.0 : 0.0) << i;
}

TEST(DropoutKernelTest, EmptyInputAndInvalidRatio) {
  DropoutResult r = RunDropout({Tensor(DType::kF32, Shape{0, 3}), std::nullopt, Tensor::Scalar<bool>(true)}, 0, 0);
  EXPECT_EQ(r.output.shape(), (Shape{0, 3}));
  EXPECT_FALSE(RunOp("Dropout", {Tensor::Scalar<float>(1), Tensor::Scalar<float>(1), Tensor::Scalar<bool>(true)}).ok());
}

}  // namespace
}  // namespace tsr
