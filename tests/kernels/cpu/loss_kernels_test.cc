// Tests of the CPU SoftmaxCrossEntropyLoss kernel (kernels/cpu/loss_kernels.cc) against the
// reference at every ISA level, single-threaded and split over 3 threads: [N, C] and
// [N, C, D...] scores, i64 and i32 labels, with and without class weights, every reduction,
// ignore_index (negative too, and every label ignored: mean is NaN), with and without the
// log_prob output; and labels outside [0, C), which must fail with the reference's status.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

constexpr double kTolerance = 1e-6;

class LossKernelsTest : public CpuIsaTest {};

// Labels in [0, classes), with about a quarter set to `ignore` when given.
Tensor RandomLabels(std::mt19937& rng, DType dtype, const Shape& shape, int64_t classes,
                    std::optional<int64_t> ignore) {
  std::vector<int64_t> v(static_cast<size_t>(shape.num_elements()));
  for (int64_t& x : v) x = ignore.has_value() && rng() % 4 == 0 ? *ignore : static_cast<int64_t>(rng() % classes);
  if (dtype == DType::kI64) return Tensor::FromVector<int64_t>(shape, v);
  return Tensor::FromVector<int32_t>(shape, std::vector<int32_t>(v.begin(), v.end()));
}

// The cpu kernel against the reference with the node's first `outputs` outputs.
void ExpectMatches(const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs, int outputs) {
  RunOpOptions reference;
  reference.outputs = outputs;
  absl::StatusOr<std::vector<Tensor>> want = RunOp("SoftmaxCrossEntropyLoss", inputs, attrs, reference);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 3}) {
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    cpu.outputs = outputs;
    if (threads > 1) cpu.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp("SoftmaxCrossEntropyLoss", inputs, attrs, cpu);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), static_cast<size_t>(outputs));
    for (int o = 0; o < outputs; ++o) {
      ExpectSameTensor((*got)[o], (*want)[o], kTolerance, absl::StrCat("output ", o, " threads=", threads));
    }
  }
}

TEST_P(LossKernelsTest, SoftmaxCrossEntropyEveryVariant) {
  uint32_t seed = 900;
  for (const Shape& shape :
       {Shape{1, 1}, Shape{7, 10}, Shape{64, 10}, Shape{5, 37}, Shape{3, 5, 4}, Shape{2, 3, 2, 2}, Shape{0, 4}}) {
    const int64_t classes = shape.dim(1);
    Shape label_shape({shape.dim(0)});
    for (int i = 2; i < shape.rank(); ++i) label_shape.AddDim(shape.dim(i));
    for (const char* reduction : {"mean", "sum", "none"}) {
      for (DType label_dtype : {DType::kI64, DType::kI32}) {
        for (std::optional<int64_t> ignore :
             {std::optional<int64_t>(), std::optional<int64_t>(-100), std::optional<int64_t>(classes > 1 ? 1 : 0)}) {
          for (bool weighted : {false, true}) {
            ++seed;
            SCOPED_TRACE(absl::StrCat("seed=", seed, " scores=", shape.ToString(), " reduction=", reduction, " labels=",
                                      DTypeName(label_dtype), " ignore=", ignore.value_or(-1), " weighted=", weighted));
            std::mt19937 rng(seed);
            const Tensor scores = RandomF32(rng, shape, -8.0f, 8.0f);
            const Tensor labels = RandomLabels(rng, label_dtype, label_shape, classes, ignore);
            std::optional<Tensor> weights;
            if (weighted) weights = RandomF32(rng, Shape{classes}, 0.1f, 2.0f);
            AttrMap attrs = {{"reduction", AttrValue::String(reduction)}};
            if (ignore.has_value()) attrs["ignore_index"] = AttrValue::Int(*ignore);
            for (int outputs : {1, 2}) ExpectMatches({scores, labels, weights}, attrs, outputs);
          }
        }
      }
    }
  }
}

TEST_P(LossKernelsTest, EveryLabelIgnoredMeansNaN) {
  const Tensor scores = Tensor::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor labels = Tensor::FromVector<int64_t>(Shape{2}, {-1, -1});
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> got =
      RunOp("SoftmaxCrossEntropyLoss", {scores, labels}, {{"ignore_index", AttrValue::Int(-1)}}, cpu);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::isnan((*got)[0].data<float>()[0]));
}

TEST_P(LossKernelsTest, LabelsOutsideTheClassesAreTheReferencesError) {
  const Tensor scores = Tensor::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  for (int64_t bad : {3, -1, 100}) {
    SCOPED_TRACE(absl::StrCat("label=", bad));
    const Tensor labels = Tensor::FromVector<int64_t>(Shape{2}, {0, bad});
    RunOpOptions reference;
    absl::StatusOr<std::vector<Tensor>> want = RunOp("SoftmaxCrossEntropyLoss", {scores, labels}, {}, reference);
    ASSERT_FALSE(want.ok());
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    absl::StatusOr<std::vector<Tensor>> got = RunOp("SoftmaxCrossEntropyLoss", {scores, labels}, {}, cpu);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status(), want.status());
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(LossKernelsTest);

}  // namespace
}  // namespace tsr
