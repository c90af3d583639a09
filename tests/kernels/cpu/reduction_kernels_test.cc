// Tests of the cpu f32 reductions (ReduceSum/Mean/Max/Min/Prod, ArgMax) against the
// reference kernels at every ISA level, single- and multi-threaded: every axes
// subset of rank-3/4 shapes (adjacent and not, none, all, negative), keepdims and
// noop_with_empty_axes, ranks 0..5, vector-tail sizes, zero-size dims, NaN/inf for
// Max/Min/ArgMax and ties for ArgMax.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

const char* const kReduceOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"};

// The reference sums in double; the AVX2 kernels sum blocks of <= 16 values per f32
// lane and widen the block sums into double, so their error is about 20 f32 ulps of
// the sum of |x| over a block (~1e-6 per 512 values in [-1, 1]). The test reductions
// have at most ~6000 such values, well inside 1e-4. Max/Min are exact; products are
// formed in double, as in the reference, and differ only in order.
double Tolerance(absl::string_view op) {
  if (op == "ReduceSum") return 1e-4;
  if (op == "ReduceMax" || op == "ReduceMin") return 0.0;
  return 1e-5;
}

void CheckReduce(absl::string_view op, const Tensor& x, const std::optional<std::vector<int64_t>>& axes, int keepdims,
                 int noop = 0) {
  SCOPED_TRACE(absl::StrCat(op, " x=", x.shape().ToString(),
                            " axes=", axes ? absl::StrCat("[", absl::StrJoin(*axes, ","), "]") : "absent",
                            " keepdims=", keepdims, " noop_with_empty_axes=", noop));
  std::vector<std::optional<Tensor>> inputs = {x};
  if (axes) inputs.push_back(Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(axes->size())}, *axes));
  const AttrMap attrs = {{"keepdims", AttrValue::Int(keepdims)}, {"noop_with_empty_axes", AttrValue::Int(noop)}};
  ExpectCpuMatchesReference(op, inputs, attrs, Tolerance(op));
}

// Values for products: magnitudes near 1 so long products neither vanish nor blow up.
Tensor ProdFriendly(std::mt19937& rng, const Shape& shape) {
  Tensor t = RandomF32(rng, shape, 0.8f, 1.25f);
  std::bernoulli_distribution negative(0.3);
  for (float& v : t.flat<float>()) v = negative(rng) ? -v : v;
  return t;
}

Tensor InputFor(absl::string_view op, std::mt19937& rng, const Shape& shape) {
  return op == "ReduceProd" ? ProdFriendly(rng, shape) : RandomF32(rng, shape);
}

class CpuReductionTest : public testing::CpuIsaTest {};

TEST_P(CpuReductionTest, EveryAxesSubsetOfRank3And4) {
  const std::vector<Shape> shapes = {{3, 17, 5}, {9, 2, 33}, {2, 3, 4, 5}, {4, 1, 3, 17}, {3, 11, 2, 9}};
  uint32_t seed = 100;
  for (const Shape& shape : shapes) {
    const int rank = shape.rank();
    for (int mask = 0; mask < (1 << rank); ++mask) {
      for (int keepdims : {0, 1}) {
        for (const char* op : kReduceOps) {
          SCOPED_TRACE(absl::StrCat("seed=", ++seed));
          std::mt19937 rng(seed);
          std::vector<int64_t> axes;
          std::bernoulli_distribution negate(0.5);
          for (int d = 0; d < rank; ++d) {
            if (mask & (1 << d)) axes.push_back(negate(rng) ? d - rank : d);
          }
          // mask 0: an empty axes input (all dims) and an absent one.
          CheckReduce(op, InputFor(op, rng, shape), axes, keepdims);
          if (mask == 0) CheckReduce(op, InputFor(op, rng, shape), std::nullopt, keepdims);
        }
      }
    }
  }
}

TEST_P(CpuReductionTest, NoopWithEmptyAxes) {
  std::mt19937 rng(7);
  for (const char* op : kReduceOps) {
    CheckReduce(op, InputFor(op, rng, {3, 17}), std::nullopt, 1, /*noop=*/1);
    CheckReduce(op, InputFor(op, rng, {3, 17}), std::vector<int64_t>{}, 0, /*noop=*/1);
    // Non-empty axes ignore the flag.
    CheckReduce(op, InputFor(op, rng, {3, 17}), std::vector<int64_t>{-1}, 0, /*noop=*/1);
  }
}

TEST_P(CpuReductionTest, VectorTailsAndBlocks) {
  uint32_t seed = 200;
  for (int64_t n : {1, 3, 17, 1023, 5000}) {
    for (const char* op : kReduceOps) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed, " n=", n));
      std::mt19937 rng(seed);
      CheckReduce(op, InputFor(op, rng, {n}), std::vector<int64_t>{0}, 0);                         // one run
      CheckReduce(op, InputFor(op, rng, {3, n}), std::vector<int64_t>{1}, 1);                      // horizontal
      CheckReduce(op, InputFor(op, rng, {n, 3}), std::vector<int64_t>{0}, 0);                      // vertical, narrow
      CheckReduce(op, InputFor(op, rng, {5, n}), std::vector<int64_t>{0}, 1);                      // vertical, wide
      CheckReduce(op, InputFor(op, rng, {2, n > 17 ? 40 : n, 3}), std::vector<int64_t>{0, 2}, 0);  // strided runs
    }
  }
  // Vertical sums over many rows (several 16-row blocks) and columns past one block.
  std::mt19937 rng(300);
  CheckReduce("ReduceSum", RandomF32(rng, {100, 600}), std::vector<int64_t>{0}, 0);
  CheckReduce("ReduceMean", RandomF32(rng, {7, 37, 300}), std::vector<int64_t>{0, 1}, 1);
  CheckReduce("ReduceMax", RandomF32(rng, {3, 70, 513}), std::vector<int64_t>{1}, 0);
}

TEST_P(CpuReductionTest, Ranks0To5) {
  const std::vector<Shape> shapes = {{}, {6}, {4, 5}, {3, 1, 7}, {2, 3, 4, 5}, {2, 3, 1, 4, 5}};
  uint32_t seed = 400;
  for (const Shape& shape : shapes) {
    for (const char* op : kReduceOps) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed));
      std::mt19937 rng(seed);
      CheckReduce(op, InputFor(op, rng, shape), std::nullopt, 1);
      CheckReduce(op, InputFor(op, rng, shape), std::nullopt, 0);
      if (shape.rank() >= 2) {
        const int rank = shape.rank();
        CheckReduce(op, InputFor(op, rng, shape), std::vector<int64_t>{0, rank - 1}, 0);
        CheckReduce(op, InputFor(op, rng, shape), std::vector<int64_t>{-2}, 1);
      }
      if (shape.rank() == 5) CheckReduce(op, InputFor(op, rng, shape), std::vector<int64_t>{1, 3}, 0);
    }
  }
}

TEST_P(CpuReductionTest, ZeroSizeDims) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{0}, {0}},       {{0, 3}, {0}},    {{0, 3}, {1}},   {{3, 0}, {1}},      {{3, 0}, {0}},
      {{2, 0, 4}, {1}}, {{2, 0, 4}, {0}}, {{2, 0, 4}, {}}, {{2, 0, 4}, {0, 2}}};
  std::mt19937 rng(500);
  for (const auto& [shape, axes] : cases) {
    for (const char* op : kReduceOps) {
      for (int keepdims : {0, 1}) CheckReduce(op, RandomF32(rng, shape), axes, keepdims);
    }
  }
}

// Max/Min propagate NaN whatever its position (vector body, tail, first element).
TEST_P(CpuReductionTest, MaxMinNanAndInf) {
  uint32_t seed = 600;
  for (const Shape& shape : std::vector<Shape>{{4, 1023}, {1023, 4}, {5, 40}, {40, 17}}) {
    for (int trial = 0; trial < 6; ++trial) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed));
      std::mt19937 rng(seed);
      Tensor x = RandomF32(rng, shape);
      std::uniform_int_distribution<int64_t> pos(0, x.num_elements() - 1);
      const float specials[] = {kNan, kInf, -kInf};
      for (int k = 0; k < 4; ++k) x.flat<float>()[pos(rng)] = specials[(trial + k) % 3];
      if (trial == 0) x.flat<float>()[x.num_elements() - 1] = kNan;
      if (trial == 1) x.flat<float>()[0] = kNan;
      for (const char* op : {"ReduceMax", "ReduceMin"}) {
        for (int64_t axis : {0, 1}) CheckReduce(op, x, std::vector<int64_t>{axis}, 1);
        CheckReduce(op, x, std::nullopt, 0);
      }
    }
  }
}

void CheckArgMax(const Tensor& x, int64_t axis, int keepdims, int last) {
  SCOPED_TRACE(absl::StrCat("ArgMax x=", x.shape().ToString(), " axis=", axis, " keepdims=", keepdims,
                            " select_last_index=", last));
  const AttrMap attrs = {{"axis", AttrValue::Int(axis)},
                         {"keepdims", AttrValue::Int(keepdims)},
                         {"select_last_index", AttrValue::Int(last)}};
  ExpectCpuMatchesReference("ArgMax", {x}, attrs, 0.0);
}

TEST_P(CpuReductionTest, ArgMaxAxesAndShapes) {
  const std::vector<Shape> shapes = {{1}, {17}, {1023}, {3, 17}, {1023, 3}, {2, 3, 4, 5}, {2, 300, 9}, {4, 2, 600}};
  uint32_t seed = 700;
  for (const Shape& shape : shapes) {
    for (int64_t axis = -shape.rank(); axis < shape.rank(); ++axis) {
      for (int keepdims : {0, 1}) {
        for (int last : {0, 1}) {
          SCOPED_TRACE(absl::StrCat("seed=", ++seed));
          std::mt19937 rng(seed);
          CheckArgMax(RandomF32(rng, shape), axis, keepdims, last);
        }
      }
    }
  }
  std::mt19937 rng(750);
  CheckArgMax(RandomF32(rng, {0, 5}), 1, 1, 0);  // no outputs
  CheckArgMax(RandomF32(rng, {4, 0}), 0, 0, 1);
}

// Few distinct values (so many ties, including -0 vs +0), NaN and infinities.
TEST_P(CpuReductionTest, ArgMaxTiesNanInf) {
  const std::vector<Shape> shapes = {{1023}, {6, 37}, {37, 6}, {3, 45, 20}};
  const float values[] = {0.0f, -0.0f, 1.0f, 1.0f, 2.0f, 2.0f, -kInf, kInf, kNan};
  uint32_t seed = 800;
  for (const Shape& shape : shapes) {
    for (int variant = 0; variant < 4; ++variant) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed, " variant=", variant));
      std::mt19937 rng(seed);
      // variant 0: ties only; 1: with infinities; 2: with NaN; 3: all NaN.
      const int choices = variant == 0 ? 6 : variant == 1 ? 8 : 9;
      std::uniform_int_distribution<int> pick(0, choices - 1);
      Tensor x(DType::kF32, shape);
      for (float& v : x.flat<float>()) v = variant == 3 ? kNan : values[pick(rng)];
      for (int64_t axis = 0; axis < shape.rank(); ++axis) {
        for (int last : {0, 1}) CheckArgMax(x, axis, 1, last);
      }
    }
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(CpuReductionTest);

}  // namespace
}  // namespace tsr
