// Reference MatMul and Gemm kernels (kernels/reference/matmul_kernels.cc): hand-computed
// products, numpy's 1-D promotion, batch broadcasting against an explicit loop, zero
// sizes, integer and half dtypes, and every Gemm transpose / C-broadcast combination.
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
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectNear;
using ::tsr::testing::Random;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

// Absolute tolerance of ExpectNear where a test gives none.
constexpr double kTol = 1e-12;

TEST(MatMulKernelTest, HandComputed2x3Times3x2) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  for (bool f64 : {false, true}) {
    Tensor a = f64 ? Tensor::FromVector<double>({2, 3}, {1, 2, 3, 4, 5, 6})
                   : Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = f64 ? Tensor::FromVector<double>({3, 2}, {7, 8, 9, 10, 11, 12})
                   : Tensor::FromVector<float>({3, 2}, {7, 8, 9, 10, 11, 12});
    Tensor y = RunOne("MatMul", {a, b});
    EXPECT_EQ(y.dtype(), f64 ? DType::kF64 : DType::kF32);
    EXPECT_EQ(y.shape(), (Shape{2, 2}));
    ExpectNear(y, {58, 64, 139, 154}, kTol);
  }
}

TEST(MatMulKernelTest, OneDimensionalOperands) {
  Tensor v = Tensor::FromVector<float>({3}, {1, 2, 3});
  Tensor m = Tensor::FromVector<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor dot = RunOne("MatMul", {v, v});
  EXPECT_EQ(dot.shape(), Shape());
  ExpectNear(dot, {14}, kTol);
  Tensor row = RunOne("MatMul", {v, m});  // [3] x [3,2] -> [2]
  EXPECT_EQ(row.shape(), (Shape{2}));
  ExpectNear(row, {4, 5}, kTol);
  Tensor mt = Tensor::FromVector<float>({2, 3}, {1, 0, 1, 0, 1, 1});
  Tensor col = RunOne("MatMul", {mt, v});  // [2,3] x [3] -> [2]
  EXPECT_EQ(col.shape(), (Shape{2}));
  ExpectNear(col, {4, 5}, kTol);
  // A batched matrix times a vector: [2,2,3] x [3] -> [2,2].
  Tensor batched = Tensor::FromVector<float>({2, 2, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  Tensor bv = RunOne("MatMul", {batched, v});
  EXPECT_EQ(bv.shape(), (Shape{2, 2}));
  ExpectNear(bv, {1, 2, 3, 6}, kTol);
}

TEST(MatMulKernelTest, BroadcastBatchDimsMatchExplicitLoop) {
  constexpr uint32_t kSeed = 1234;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  // A [2,1,4,3] and B [3,3,5] broadcast to batch [2,3].
  const Tensor a = Random({2, 1, 4, 3}, kSeed);
  const Tensor b = Random({3, 3, 5}, kSeed + 1);
  Tensor y = RunOne("MatMul", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 5}));
  const std::vector<double> av = Values(a), bv = Values(b);
  std::vector<double> expected;
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 3; ++q) {
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 5; ++j) {
          double s = 0;
          for (int k = 0; k < 3; ++k) s += av[(p * 4 + i) * 3 + k] * bv[(q * 3 + k) * 5 + j];
          expected.push_back(s);
        }
      }
    }
  }
  ExpectNear(y, expected, kTol);
}

TEST(MatMulKernelTest, ZeroSizedBatchAndContraction) {
  Tensor y = RunOne("MatMul", {Tensor(DType::kF32, {0, 2, 3}), Tensor(DType::kF32, {3, 4})});
  EXPECT_EQ(y.shape(), (Shape{0, 2, 4}));
  EXPECT_EQ(y.num_elements(), 0);
  // K = 0: every output is an empty sum.
  Tensor z = RunOne("MatMul", {Tensor(DType::kF32, {2, 0}), Tensor(DType::kF32, {0, 3})});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  ExpectNear(z, {0, 0, 0, 0, 0, 0}, kTol);
}

TEST(MatMulKernelTest, IntegerDTypesAreExact) {
  Tensor a = Tensor::FromVector<int64_t>({1, 2}, {int64_t{1} << 60, 3});
  Tensor b = Tensor::FromVector<int64_t>({2, 1}, {3, -1});
  Tensor y = RunOne("MatMul", {a, b});
  ASSERT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.data<int64_t>()[0], (int64_t{3} << 60) - 3);  // not representable in a double
  // i32 products wrap like the i32 arithmetic they stand for: 65536 * 65536 = 2^32 -> 0, + 3.
  Tensor w = RunOne("MatMul",
                    {Tensor::FromVector<int32_t>({1, 2}, {65536, 1}), Tensor::FromVector<int32_t>({2, 1}, {65536, 3})});
  EXPECT_EQ(w.data<int32_t>()[0], 3);
  Tensor ai = Tensor::FromVector<int32_t>({2, 2}, {1, -2, 3, 4});
  Tensor yi = RunOne("MatMul", {ai, ai});
  ASSERT_EQ(yi.dtype(), DType::kI32);
  EXPECT_EQ(std::vector<int32_t>(yi.data<int32_t>(), yi.data<int32_t>() + 4), (std::vector<int32_t>{-5, -10, 15, 10}));
}

TEST(MatMulKernelTest, HalfDTypesRoundTheDoubleResult) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a(dtype, {1, 2}), b(dtype, {2, 1});
    auto set = [](Tensor& t, int i, float v) {
      if (t.dtype() == DType::kF16) {
        t.data<Float16>()[i] = Float16::FromFloat(v);
      } else {
        t.data<BFloat16>()[i] = BFloat16::FromFloat(v);
      }
    };
    set(a, 0, 1.5f);
    set(a, 1, -2.0f);
    set(b, 0, 4.0f);
    set(b, 1, 0.25f);
    Tensor y = RunOne("MatMul", {a, b});
    ASSERT_EQ(y.dtype(), dtype);
    ExpectNear(y, {5.5}, kTol);
  }
}

// Gemm with every (transA, transB) pair and every shape of C, against an explicit loop.
class GemmKernelTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

Tensor Transposed(const Tensor& t) {
  const int64_t r = t.shape().dim(0), c = t.shape().dim(1);
  std::vector<double> v(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) v[j * r + i] = t.GetAsDouble(i * c + j);
  }
  return Tensor::FromVector<double>({c, r}, v);
}

TEST_P(GemmKernelTest, MatchesExplicitLoop) {
  const auto [trans_a, trans_b] = GetParam();
  constexpr uint32_t kSeed = 77;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed, " transA=", trans_a, " transB=", trans_b));
  constexpr int64_t kM = 3, kK = 4, kN = 2;
  const Tensor a = Random({kM, kK}, kSeed);
  const Tensor b = Random({kK, kN}, kSeed + 1);
  const double alpha = 0.5, beta = -2.0;
  AttrMap attrs{{"alpha", AttrValue::Float(alpha)},
                {"beta", AttrValue::Float(beta)},
                {"transA", AttrValue::Int(trans_a)},
                {"transB", AttrValue::Int(trans_b)}};
  const std::vector<Shape> c_shapes = {Shape{kM, kN}, Shape{kN}, Shape{1, kN}, Shape{kM, 1}, Shape{}, Shape{1, 1}};
  for (const std::optional<Shape>& c_shape : std::vector<std::optional<Shape>>{
           std::nullopt, c_shapes[0], c_shapes[1], c_shapes[2], c_shapes[3], c_shapes[4], c_shapes[5]}) {
    SCOPED_TRACE(c_shape ? c_shape->ToString() : "no C");
    std::optional<Tensor> c;
    if (c_shape) c = Random(*c_shape, kSeed + 2);
    Tensor y = RunOne("Gemm", {trans_a ? Transposed(a) : a, trans_b ? Transposed(b) : b, c}, attrs);
    ASSERT_EQ(y.shape(), (Shape{kM, kN}));
    std::vector<double> expected;
    for (int64_t i = 0; i < kM; ++i) {
      for (int64_t j = 0; j < kN; ++j) {
        double s = 0;
        for (int64_t k = 0; k < kK; ++k) s += a.GetAsDouble(i * kK + k) * b.GetAsDouble(k * kN + j);
        double cv = 0;
        if (c) {
          const Shape& cs = c->shape();
          const int64_t row = cs.rank() == 2 && cs.dim(0) != 1 ? i : 0;
          const int64_t col = cs.rank() >= 1 && cs.dim(cs.rank() - 1) != 1 ? j : 0;
          cv = c->GetAsDouble(row * (cs.rank() >= 1 ? cs.dim(cs.rank() - 1) : 1) + col);
        }
        expected.push_back(alpha * s + beta * cv);
      }
    }
    ExpectNear(y, expected, kTol);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmKernelTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(GemmKernelTest, HandComputedWithDefaults) {
  // alpha = beta = 1: [[1,2],[3,4]] x [[1,0],[0,1]] + [10, 20].
  Tensor y =
      RunOne("Gemm", {Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}), Tensor::FromVector<float>({2, 2}, {1, 0, 0, 1}),
                      Tensor::FromVector<float>({2}, {10, 20})});
  ExpectNear(y, {11, 22, 13, 24}, kTol);
}

TEST(GemmKernelTest, IntegerDTypesTruncateTheScaledResult) {
  // alpha * (1*3 + 2*4) + beta * 5 = 0.5 * 11 + 5 = 10.5 -> 10.
  Tensor y = RunOne("Gemm",
                    {Tensor::FromVector<int32_t>({1, 2}, {1, 2}), Tensor::FromVector<int32_t>({2, 1}, {3, 4}),
                     Tensor::FromVector<int32_t>({1}, {5})},
                    {{"alpha", AttrValue::Float(0.5)}});
  ASSERT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.data<int32_t>()[0], 10);
}

}  // namespace
}  // namespace tsr
