// Gradients of the ops added for ONNX — ReduceL1/SumSquare/LogSum/LogSumExp, CumSum,
// TopK, Einsum (reduction_grads.cc), InstanceNormalization, MeanVarianceNormalization,
// LRN, Hardmax (normalization_grads.cc) and NegativeLogLikelihoodLoss
// (softmax_grads.cc) — against central differences in f64, on randomized shapes and
// values with printed seeds.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

// A random shape of rank [1, 4] with dims in [1, 4].
Shape RandomShape(std::mt19937& rng, int min_rank = 1) {
  std::uniform_int_distribution<int> rank(min_rank, 4), dim(1, 4);
  Shape s;
  for (int r = rank(rng); r > 0; --r) s.AddDim(dim(rng));
  return s;
}

// A random non-empty subset of the axes of a rank-`rank` shape, some negative.
std::vector<int64_t> RandomAxes(std::mt19937& rng, int rank) {
  std::vector<int64_t> axes;
  std::bernoulli_distribution coin(0.5);
  for (int a = 0; a < rank; ++a) {
    if (coin(rng)) axes.push_back(coin(rng) ? a : a - rank);
  }
  if (axes.empty()) axes.push_back(0);
  return axes;
}

Tensor AxesTensor(const std::vector<int64_t>& axes) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(axes.size())}, axes);
}

TEST(ReductionExtraGradsTest, ReduceOpsOverRandomAxes) {
  uint32_t seed = 7100;
  for (const char* op : {"ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    for (int trial = 0; trial < 4; ++trial, ++seed) {
      std::mt19937 rng(seed);
      const Shape shape = RandomShape(rng);
      const std::vector<int64_t> axes = RandomAxes(rng, shape.rank());
      SCOPED_TRACE(absl::StrCat(op, " ", shape.ToString(), " trial ", trial));
      // LogSum needs positive sums: positive inputs for it.
      const bool positive = std::string(op) == "ReduceLogSum";
      const Tensor x = RandomF64(rng, shape, positive ? 0.2 : -2, 2);
      const AttrMap attrs = {{"keepdims", AttrValue::Int(trial % 2)}};
      ExpectGradientsMatchNumeric(GradCheck{op, {x, AxesTensor(axes)}, attrs, {0}}, seed);
      // No axes: everything; noop_with_empty_axes: the identity.
      if (trial == 0) {
        ExpectGradientsMatchNumeric(GradCheck{op, {x}, {}, {0}}, seed);
        ExpectGradientsMatchNumeric(GradCheck{op, {x}, {{"noop_with_empty_axes", AttrValue::Int(1)}}, {0}}, seed);
      }
    }
  }
}

TEST(ReductionExtraGradsTest, CumSumEveryDirection) {
  uint32_t seed = 7200;
  for (int exclusive = 0; exclusive <= 1; ++exclusive) {
    for (int reverse = 0; reverse <= 1; ++reverse, ++seed) {
      std::mt19937 rng(seed);
      const Shape shape = RandomShape(rng);
      const int64_t axis = std::uniform_int_distribution<int64_t>(-shape.rank(), shape.rank() - 1)(rng);
      SCOPED_TRACE(absl::StrCat(shape.ToString(), " axis ", axis, " exclusive ", exclusive, " reverse ", reverse));
      const AttrMap attrs = {{"exclusive", AttrValue::Int(exclusive)}, {"reverse", AttrValue::Int(reverse)}};
      ExpectGradientsMatchNumeric(
          GradCheck{"CumSum", {RandomF64(rng, shape), Tensor::Scalar<int64_t>(axis)}, attrs, {0}}, seed);
    }
  }
}

TEST(ReductionExtraGradsTest, TopKScattersToTheSelected) {
  uint32_t seed = 7300;
  for (int largest = 0; largest <= 1; ++largest) {
    for (int trial = 0; trial < 3; ++trial, ++seed) {
      std::mt19937 rng(seed);
      const Shape shape = RandomShape(rng);
      const int axis = std::uniform_int_distribution<int>(0, shape.rank() - 1)(rng);
      const int64_t k = std::uniform_int_distribution<int64_t>(1, shape.dim(axis))(rng);
      SCOPED_TRACE(absl::StrCat(shape.ToString(), " axis ", axis, " k ", k, " largest ", largest));
      const AttrMap attrs = {{"axis", AttrValue::Int(axis)}, {"largest", AttrValue::Int(largest)}};
      ExpectGradientsMatchNumeric(GradCheck{"TopK", {RandomF64(rng, shape), AxesTensor({k})}, attrs, {0}}, seed);
    }
  }
}

TEST(ReductionExtraGradsTest, Einsum) {
  struct Case {
    const char* equation;
    std::vector<Shape> shapes;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}},
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}},
      {"ij->", {{3, 2}}},
      {"ij->j", {{3, 2}}},
      {"i,j->ij", {{3}, {2}}},
      {"ij,kj", {{2, 3}, {4, 3}}},
      {"ijk,k->ji", {{2, 3, 2}, {2}}},
      {"i,i,i->", {{3}, {3}, {3}}},
  };
  uint32_t seed = 7400;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs;
    std::vector<int> wrt;
    for (const Shape& s : c.shapes) {
      wrt.push_back(static_cast<int>(inputs.size()));
      inputs.push_back(RandomF64(rng, s));
    }
    ExpectGradientsMatchNumeric(GradCheck{"Einsum", inputs, {{"equation", AttrValue::String(c.equation)}}, wrt},
                                seed++);
  }
}

TEST(ReductionExtraGradsTest, InstanceNormalization) {
  uint32_t seed = 7500;
  for (int trial = 0; trial < 4; ++trial, ++seed) {
    std::mt19937 rng(seed);
    Shape shape = RandomShape(rng, 3);
    shape.set_dim(2, std::max<int64_t>(shape.dim(2), 2));  // at least two elements to normalize
    SCOPED_TRACE(shape.ToString());
    const Shape c({shape.dim(1)});
    ExpectGradientsMatchNumeric(GradCheck{"InstanceNormalization",
                                          {RandomF64(rng, shape, -2, 2), RandomF64(rng, c, 0.5, 2), RandomF64(rng, c)},
                                          {{"epsilon", AttrValue::Float(1e-3)}},
                                          {0, 1, 2}},
                                seed);
  }
}

TEST(ReductionExtraGradsTest, MeanVarianceNormalization) {
  uint32_t seed = 7600;
  std::mt19937 first(seed);
  // The default axes [0, 2, 3].
  ExpectGradientsMatchNumeric(
      GradCheck{"MeanVarianceNormalization", {RandomF64(first, Shape{2, 3, 2, 2}, -2, 2)}, {}, {0}, 0, 1e-5}, seed);
  for (int trial = 0; trial < 3; ++trial) {
    std::mt19937 rng(++seed);
    const Shape shape = RandomShape(rng, 2);
    const std::vector<int64_t> axes = RandomAxes(rng, shape.rank());
    SCOPED_TRACE(shape.ToString());
    ExpectGradientsMatchNumeric(GradCheck{"MeanVarianceNormalization",
                                          {RandomF64(rng, shape, -2, 2)},
                                          {{"axes", AttrValue::Ints(axes)}},
                                          {0},
                                          0,
                                          1e-5},
                                seed);
  }
}

TEST(ReductionExtraGradsTest, LRN) {
  uint32_t seed = 7700;
  for (int64_t size : {1, 2, 3, 5}) {
    std::mt19937 rng(seed);
    Shape shape = RandomShape(rng, 3);
    shape.set_dim(1, 4);
    SCOPED_TRACE(absl::StrCat(shape.ToString(), " size ", size));
    const AttrMap attrs = {{"size", AttrValue::Int(size)},
                           {"alpha", AttrValue::Float(0.5)},
                           {"beta", AttrValue::Float(0.75)},
                           {"bias", AttrValue::Float(1.5)}};
    ExpectGradientsMatchNumeric(GradCheck{"LRN", {RandomF64(rng, shape, -2, 2)}, attrs, {0}}, seed++);
  }
}

TEST(ReductionExtraGradsTest, HardmaxIsPiecewiseConstant) {
  std::mt19937 rng(7800);
  ExpectGradientsMatchNumeric(GradCheck{"Hardmax", {RandomF64(rng, Shape{3, 4})}, {}, {0}}, 7800);
}

TEST(ReductionExtraGradsTest, NegativeLogLikelihoodLoss) {
  uint32_t seed = 7900;
  for (const char* reduction : {"none", "sum", "mean"}) {
    for (int variant = 0; variant < 4; ++variant, ++seed) {
      std::mt19937 rng(seed);
      // [N, C, d1...] with C = 3; labels in [0, 3), some equal to ignore_index.
      Shape shape = RandomShape(rng, 2);
      shape.set_dim(1, 3);
      Shape label_shape({shape.dim(0)});
      for (int i = 2; i < shape.rank(); ++i) label_shape.AddDim(shape.dim(i));
      Tensor labels(DType::kI64, label_shape);
      std::uniform_int_distribution<int64_t> cls(0, 2);
      for (int64_t& l : labels.flat<int64_t>()) l = cls(rng);
      labels.flat<int64_t>()[0] = 0;  // keep one label that is never ignored (ignore_index is 1)
      const bool weighted = variant & 1, ignore = variant & 2;
      SCOPED_TRACE(absl::StrCat(reduction, " ", shape.ToString(), " weighted ", weighted, " ignore ", ignore));
      AttrMap attrs = {{"reduction", AttrValue::String(reduction)}};
      if (ignore) attrs["ignore_index"] = AttrValue::Int(1);
      std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, shape, -3, -0.1), labels};
      if (weighted) inputs.push_back(RandomF64(rng, Shape{3}, 0.5, 2));
      ExpectGradientsMatchNumeric(GradCheck{"NegativeLogLikelihoodLoss", inputs, attrs, {0}}, seed);
    }
  }
}

}  // namespace
}  // namespace tsr
