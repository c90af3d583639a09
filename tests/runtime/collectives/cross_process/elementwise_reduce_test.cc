// Tests of the CPU reduction kernels the MPI and Gloo backends share: ReduceElementwise
// with distinct and aliased buffers (the left operand stays left: max and min choose
// between NaNs by position), and ReduceInRankOrder, which must give every rank the same
// bits whatever its rank.
#include "runtime/collectives/cross_process/elementwise_reduce.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tsr {
namespace {

// Bitwise equality of two float vectors (NaN payloads included).
void ExpectSameBits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    ASSERT_EQ(x, y) << "element " << i << ": " << a[i] << " vs " << b[i];
  }
}

float Op(ReduceOp op, float x, float y) {
  switch (op) {
    case ReduceOp::kMax:
      return std::max(x, y);
    case ReduceOp::kMin:
      return std::min(x, y);
    default:
      return x + y;
  }
}

// 37 elements (two blocks of 16 and a tail) with NaNs at places that depend on the
// seed: facing numbers and each other in two operands. (One NaN bit pattern: which of
// two NaNs a sum returns is the compiler's choice, since it may commute the addition.)
std::vector<float> Values(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  std::vector<float> v(37);
  for (float& x : v) x = u(rng);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  v[(3 * seed) % 37] = nan;
  v[(5 * seed + 20) % 37] = nan;
  if (seed % 2 == 0) v[36] = nan;
  return v;
}

TEST(ReduceElementwiseTest, AliasedOutputsKeepTheOperandOrder) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    SCOPED_TRACE(ReduceOpName(op));
    const std::vector<float> a = Values(1), b = Values(2);
    std::vector<float> expected(a.size());
    for (size_t i = 0; i < a.size(); ++i) expected[i] = Op(op, a[i], b[i]);
    std::vector<float> distinct(a.size()), into_a = a, into_b = b;
    ReduceElementwise(DType::kF32, op, distinct.data(), a.data(), b.data(), a.size());
    ReduceElementwise(DType::kF32, op, into_a.data(), into_a.data(), b.data(), a.size());
    ReduceElementwise(DType::kF32, op, into_b.data(), a.data(), into_b.data(), a.size());
    ExpectSameBits(distinct, expected);
    ExpectSameBits(into_a, expected);
    ExpectSameBits(into_b, expected);
  }
}

TEST(ReduceElementwiseTest, IntegersAndMeanDivision) {
  std::vector<int64_t> a = {5, -7, 9}, b = {1, 2, -20};
  ReduceElementwise(DType::kI64, ReduceOp::kMin, a.data(), a.data(), b.data(), a.size());
  EXPECT_EQ(a, (std::vector<int64_t>{1, -7, -20}));
  std::vector<int32_t> m = {7, -7, 8};
  DivideForMean(DType::kI32, m.data(), m.size(), 2);
  EXPECT_EQ(m, (std::vector<int32_t>{3, -3, 4}));  // truncated toward zero
}

// Every rank of a W-rank all-reduce computes ((x0 op x1) op x2) ... bit for bit, with
// its own input in inout and the others' in buffers it only reads (checked: they are
// const here), the running result of ranks above 1 in a scratch buffer.
TEST(ReduceInRankOrderTest, EveryRankGetsTheSameBits) {
  for (int world : {1, 2, 3, 5}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
      SCOPED_TRACE(testing::Message() << ReduceOpName(op) << " over " << world << " ranks");
      std::vector<std::vector<float>> inputs;
      for (int q = 0; q < world; ++q) {
        inputs.push_back(Values(10 + q));
        inputs.back()[q] = 1e30f * (q % 2 == 0 ? 1.0f : -1.0f);  // order-dependent sums
      }
      std::vector<float> expected = inputs[0];
      for (int q = 1; q < world; ++q) {
        for (size_t i = 0; i < expected.size(); ++i) expected[i] = Op(op, expected[i], inputs[q][i]);
      }
      if (op == ReduceOp::kMean) {
        for (float& x : expected) x /= static_cast<float>(world);
      }
      for (int rank = 0; rank < world; ++rank) {
        const std::vector<std::vector<float>> others = inputs;  // only read
        std::vector<float> inout = inputs[rank];
        std::vector<float> scratch(inout.size(), -7.0f);
        ReduceInRankOrder(
            DType::kF32, op, world, rank, [&](int q) -> const void* { return others[q].data(); }, inout.data(),
            scratch.data(), inout.size());
        SCOPED_TRACE(testing::Message() << "rank " << rank);
        ExpectSameBits(inout, expected);
      }
    }
  }
}

}  // namespace
}  // namespace tsr
