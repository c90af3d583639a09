// Tests of the cpu GatherGrad (f32) and SliceGrad (float dtypes) kernels
// (kernels/cpu/indexing_grad_kernels.cc) against the reference kernels at every ISA
// level, single- and multi-threaded: GatherGrad along every axis (negative too) with
// i32 and i64 indices of rank 0..2, repeated and negative indices, inner sizes
// 1/3/17/1023 (work-item tails), zero-size dims, and the reference's error for an
// out-of-range index; SliceGrad on random shapes with random starts/ends, negative
// and >1 steps (the copy engine and the strided-store path), negative axes, absent
// axes/steps, empty slices, zero-size dims and 2-, 4- and 8-byte float dtypes.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::ExpectCpuMatchesReference;
using testing::RandomF32;
using testing::ThreadedParallelFor;

class CpuIndexingGradTest : public testing::CpuIsaTest {};

Tensor I64(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// `values` as indices of `shape` and `dtype` (i32 or i64).
Tensor Indices(DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<int64_t>()[i] = values[i];
    }
  }
  return t;
}

// dY's shape for GatherGrad: data's dims with the axis replaced by the indices' dims.
Shape GatheredShape(const Shape& data, int axis, const Shape& indices) {
  Shape s;
  for (int i = 0; i < axis; ++i) s.AddDim(data.dim(i));
  for (int64_t d : indices.dims()) s.AddDim(d);
  for (int i = axis + 1; i < data.rank(); ++i) s.AddDim(data.dim(i));
  return s;
}

struct GatherCase {
  Shape data;
  int64_t axis;
  Shape indices;
};

TEST_P(CpuIndexingGradTest, GatherGrad) {
  const std::vector<GatherCase> cases = {
      {{1}, 0, {1}},
      {{3}, 0, {5}},
      {{17, 3}, 0, {4}},
      {{17, 3}, 1, {2, 3}},
      {{17, 3}, -1, {}},
      {{5, 17}, -2, {17}},
      {{4, 1023}, 0, {9}},
      {{7, 6, 1023}, 1, {3, 4}},
      {{2, 30, 300}, 1, {64}},
      {{3, 4, 5, 6}, 2, {2, 2}},
      {{3, 4, 5, 6}, -1, {7}},
      {{50, 129}, 0, {2, 40}},
      // Zero-size dims: no indices, empty inner, empty outer.
      {{5, 3}, 0, {0}},
      {{5, 0}, 0, {4}},
      {{0, 5}, 1, {3}},
      {{4, 0, 3}, 2, {2}},
  };
  uint32_t seed = 500;
  for (const GatherCase& c : cases) {
    for (DType index_dtype : {DType::kI32, DType::kI64}) {
      std::mt19937 rng(++seed);
      const int axis = static_cast<int>(c.axis < 0 ? c.axis + c.data.rank() : c.axis);
      const int64_t size = c.data.dim(axis);
      // Indices over [-size, size), so negative ones occur, and more of them than
      // the axis has: repeats.
      std::vector<int64_t> values(static_cast<size_t>(c.indices.num_elements()));
      for (int64_t& v : values) v = static_cast<int64_t>(rng() % (2 * size)) - size;
      SCOPED_TRACE(absl::StrCat("seed=", seed, " data=", c.data.ToString(), " axis=", c.axis,
                                " indices=", c.indices.ToString(), " ", DTypeName(index_dtype), " [",
                                absl::StrJoin(values, ","), "]"));
      const Tensor dy = RandomF32(rng, GatheredShape(c.data, axis, c.indices));
      ExpectCpuMatchesReference("GatherGrad", {dy, Indices(index_dtype, c.indices, values), RandomF32(rng, c.data)},
                                {{"axis", AttrValue::Int(c.axis)}});
    }
  }
}

// Every row hit many times, by positive and negative indices alike: the sums must
// come out identically at every thread count (additions in index order).
TEST_P(CpuIndexingGradTest, GatherGradRepeatedIndicesAreDeterministic) {
  std::mt19937 rng(600);
  const Shape data{6, 1000};
  std::vector<int64_t> values(300);
  for (int64_t& v : values) v = static_cast<int64_t>(rng() % 12) - 6;
  const std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, {300, 1000}), Indices(DType::kI64, {300}, values),
                                                     RandomF32(rng, data)};
  ExpectCpuMatchesReference("GatherGrad", inputs, {}, 1e-5);
  RunOpOptions options;
  options.device = kCpuDevice;
  options.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> single = RunOp("GatherGrad", inputs, {}, options);
  ASSERT_TRUE(single.ok()) << single.status();
  for (int threads : {2, 3, 5, 8}) {
    options.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp("GatherGrad", inputs, {}, options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE((*got)[0].BitwiseEquals((*single)[0])) << "threads=" << threads;
  }
}

// An index outside [-size, size) fails with the reference's status.
TEST_P(CpuIndexingGradTest, GatherGradIndexOutOfRange) {
  std::mt19937 rng(700);
  for (const std::vector<int64_t>& values :
       std::vector<std::vector<int64_t>>{{0, 5}, {-6, 1}, {1, 2, 100}, {-1000000000000}}) {
    for (DType index_dtype : {DType::kI32, DType::kI64}) {
      if (index_dtype == DType::kI32 && values[0] < INT32_MIN) continue;
      SCOPED_TRACE(absl::StrCat(DTypeName(index_dtype), " [", absl::StrJoin(values, ","), "]"));
      const Shape indices{static_cast<int64_t>(values.size())};
      const std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, GatheredShape({3, 5}, 1, indices)),
                                                         Indices(index_dtype, indices, values), RandomF32(rng, {3, 5})};
      const AttrMap attrs = {{"axis", AttrValue::Int(1)}};
      absl::StatusOr<std::vector<Tensor>> want = RunOp("GatherGrad", inputs, attrs, {});
      ASSERT_FALSE(want.ok());
      EXPECT_NE(want.status().message().find("out of range"), std::string::npos) << want.status();
      RunOpOptions cpu;
      cpu.device = kCpuDevice;
      cpu.fall_back_to_reference = false;
      absl::StatusOr<std::vector<Tensor>> got = RunOp("GatherGrad", inputs, attrs, cpu);
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status(), want.status());
    }
  }
}

// A random shape of `rank` dims from small sizes (0 now and then).
Shape RandomShape(std::mt19937& rng, int rank) {
  static constexpr int64_t kSizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
  Shape s;
  for (int i = 0; i < rank; ++i) s.AddDim(kSizes[rng() % 11 == 0 ? 0 : 1 + rng() % 10]);
  return s;
}

// SliceGrad only moves values, so it matches the reference exactly.
void ExpectSliceGradMatches(std::mt19937& rng, DType dtype, const Shape& data, const std::vector<int64_t>& starts,
                            const std::vector<int64_t>& ends, const std::optional<std::vector<int64_t>>& axes,
                            const std::optional<std::vector<int64_t>>& steps) {
  // Slice itself gives dY's shape (and a dY of the right dtype).
  std::vector<std::optional<Tensor>> slice_inputs = {RandomF32(rng, data, -4.0f, 4.0f), I64(starts), I64(ends)};
  if (axes || steps) slice_inputs.push_back(axes ? std::optional<Tensor>(I64(*axes)) : std::nullopt);
  if (steps) slice_inputs.push_back(I64(*steps));
  if (dtype != DType::kF32) {
    absl::StatusOr<std::vector<Tensor>> cast = RunOp("Cast", {slice_inputs[0]}, {{"to", AttrValue::Type(dtype)}});
    ASSERT_TRUE(cast.ok()) << cast.status();
    slice_inputs[0] = (*cast)[0];
  }
  absl::StatusOr<std::vector<Tensor>> sliced = RunOp("Slice", slice_inputs);
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  std::vector<std::optional<Tensor>> inputs = slice_inputs;
  inputs.insert(inputs.begin(), (*sliced)[0]);
  ExpectCpuMatchesReference("SliceGrad", inputs, {}, 0.0);
}

TEST_P(CpuIndexingGradTest, SliceGradRandom) {
  std::uniform_int_distribution<int64_t> bound(-25, 25);
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 5);
    const Shape shape = seed % 11 == 0 ? Shape{3, 1023} : RandomShape(rng, rank);
    std::vector<int64_t> axes(shape.rank());
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    axes.resize(1 + rng() % shape.rank());
    std::vector<int64_t> starts, ends, steps;
    for (int64_t& a : axes) {
      starts.push_back(rng() % 8 == 0 ? INT64_MIN : bound(rng));
      ends.push_back(rng() % 8 == 0 ? INT64_MAX : bound(rng));
      int64_t step = 1 + static_cast<int64_t>(rng() % 3);
      if (rng() % 2) step = -step;
      steps.push_back(step);
      if (rng() % 2) a -= shape.rank();  // negative axes
    }
    SCOPED_TRACE(absl::StrCat("seed=", seed, " data=", shape.ToString(), " starts=[", absl::StrJoin(starts, ","),
                              "] ends=[", absl::StrJoin(ends, ","), "] axes=[", absl::StrJoin(axes, ","), "] steps=[",
                              absl::StrJoin(steps, ","), "]"));
    ExpectSliceGradMatches(rng, DType::kF32, shape, starts, ends, axes, steps);
    // Without steps, and without axes (the first k axes).
    ExpectSliceGradMatches(rng, DType::kF32, shape, starts, ends, axes, std::nullopt);
    ExpectSliceGradMatches(rng, DType::kF32, shape, starts, ends, std::nullopt, std::nullopt);
  }
}

TEST_P(CpuIndexingGradTest, SliceGradCorners) {
  std::mt19937 rng(800);
  const std::vector<int64_t> none;
  // Sizes 1, 3, 17, 1023 on the innermost axis, whole and strided.
  for (int64_t n : {1, 3, 17, 1023}) {
    SCOPED_TRACE(n);
    ExpectSliceGradMatches(rng, DType::kF32, {2, n}, {0}, {n}, std::vector<int64_t>{1}, std::vector<int64_t>{1});
    ExpectSliceGradMatches(rng, DType::kF32, {2, n}, {1}, {n}, std::vector<int64_t>{-1}, std::vector<int64_t>{2});
    ExpectSliceGradMatches(rng, DType::kF32, {n, 3}, {-1}, {INT64_MIN}, std::vector<int64_t>{0},
                           std::vector<int64_t>{-1});
    ExpectSliceGradMatches(rng, DType::kF32, {3, n}, {-2}, {0}, std::vector<int64_t>{1}, std::vector<int64_t>{-3});
  }
  // Empty slices (dY has no elements: d data is all zeros) and zero-size data.
  ExpectSliceGradMatches(rng, DType::kF32, {4, 5}, {3}, {3}, std::vector<int64_t>{1}, std::nullopt);
  ExpectSliceGradMatches(rng, DType::kF32, {4, 5}, {1}, {3}, std::vector<int64_t>{1}, std::vector<int64_t>{-1});
  ExpectSliceGradMatches(rng, DType::kF32, {0, 5}, {1}, {3}, std::vector<int64_t>{1}, std::nullopt);
  // The full tensor (a plain copy) and a long contiguous run split over the threads.
  ExpectSliceGradMatches(rng, DType::kF32, {3, 4, 5}, {0}, {INT64_MAX}, std::nullopt, std::nullopt);
  ExpectSliceGradMatches(rng, DType::kF32, {512, 1024}, {100}, {400}, std::nullopt, std::nullopt);
  // Other float dtypes move the same bytes, through the copy engine and through the
  // strided stores of an innermost axis with |step| > 1.
  for (DType dtype : {DType::kF64, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectSliceGradMatches(rng, dtype, {5, 17, 3}, {1, -1}, {4, 0}, std::vector<int64_t>{0, -2},
                           std::vector<int64_t>{2, -3});
    ExpectSliceGradMatches(rng, dtype, {5, 3, 17}, {1, -1}, {4, 0}, std::vector<int64_t>{0, -1},
                           std::vector<int64_t>{2, -3});
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(CpuIndexingGradTest);

}  // namespace
}  // namespace tsr
