// Tests of the CPU indexing kernels (kernels/cpu/indexing_kernels.cc: Gather,
// GatherElements, ScatterElements, OneHot) against the reference kernels, bit for bit, on
// randomized shapes (seeds printed) with i32 and i64 indices, negative indices and
// axes, duplicate scatter targets under every reduction, at every ISA level; and of
// out-of-range indices, which must fail with the reference's status.
#include <algorithm>
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
using testing::ExpectCpuMatchesReference;
using testing::ThreadedParallelFor;

constexpr DType kTestDTypes[] = {DType::kF32, DType::kU8, DType::kBool, DType::kF16, DType::kI64};

// Random bytes (bool: 0 or 1), so every bit of every element is checked. Floating
// dtypes get small integers instead when `arithmetic` (scatter reductions), so that
// sums and products stay finite and exact.
Tensor RandomTensor(std::mt19937& rng, DType dtype, const Shape& shape, bool arithmetic = false) {
  Tensor t(dtype, shape);
  if (arithmetic && IsFloating(dtype)) {
    std::uniform_int_distribution<int> value(-4, 4);
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        for (T& x : t.flat<T>()) x = T::FromFloat(static_cast<float>(value(rng)));
      } else if constexpr (std::is_floating_point_v<T>) {
        for (T& x : t.flat<T>()) x = static_cast<T>(value(rng));
      }
    });
    return t;
  }
  unsigned char* p = static_cast<unsigned char*>(t.raw_data());
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < t.num_bytes(); ++i) {
    p[i] = static_cast<unsigned char>(dtype == DType::kBool ? byte(rng) & 1 : byte(rng));
  }
  return t;
}

// Indices in [-size, size) (or [0, size) when !negative), of dtype i32 or i64.
Tensor RandomIndices(std::mt19937& rng, DType dtype, const Shape& shape, int64_t size, bool negative = true) {
  std::vector<int64_t> v(static_cast<size_t>(shape.num_elements()));
  std::uniform_int_distribution<int64_t> dist(negative ? -size : 0, size - 1);
  for (int64_t& x : v) x = dist(rng);
  if (dtype == DType::kI64) return Tensor::FromVector<int64_t>(shape, v);
  return Tensor::FromVector<int32_t>(shape, std::vector<int32_t>(v.begin(), v.end()));
}

Shape RandomShape(std::mt19937& rng, int rank, int64_t max_elements = 2048) {
  static constexpr int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 17};
  while (true) {
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      int64_t d = kSizes[rng() % 8];
      if (rng() % 16 == 0) d = 0;
      dims.push_back(d);
      n *= d;
    }
    if (n <= max_elements) return Shape(dims);
  }
}

// The cpu kernel against the reference: values at 1 and 3 threads, and bits.
void ExpectMatches(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs) {
  ExpectCpuMatchesReference(op, inputs, attrs, 0.0);
  RunOpOptions reference;
  absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, attrs, reference);
  ASSERT_TRUE(want.ok()) << want.status();
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  cpu.parallel_for = ThreadedParallelFor(3);
  absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, attrs, cpu);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE((*got)[0].BitwiseEquals((*want)[0])) << op;
}

void ExpectSameError(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs) {
  RunOpOptions reference;
  absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, attrs, reference);
  ASSERT_FALSE(want.ok());
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, attrs, cpu);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status(), want.status());
}

class IndexingKernelsTest : public CpuIsaTest {};

TEST_P(IndexingKernelsTest, GatherRandom) {
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 4);
    const DType dtype = kTestDTypes[seed % 5];
    const DType index_dtype = seed % 2 ? DType::kI32 : DType::kI64;
    Shape data_shape = RandomShape(rng, rank);
    const int axis = static_cast<int>(rng() % rank);
    if (data_shape.dim(axis) == 0) data_shape.set_dim(axis, 3);
    const Shape index_shape = RandomShape(rng, static_cast<int>(rng() % 3), 64);
    const int64_t attr_axis = rng() % 2 ? axis : axis - rank;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), data_shape.ToString(), " indices ",
                              DTypeName(index_dtype), index_shape.ToString(), " axis=", attr_axis));
    ExpectMatches(
        "Gather",
        {RandomTensor(rng, dtype, data_shape), RandomIndices(rng, index_dtype, index_shape, data_shape.dim(axis))},
        {{"axis", AttrValue::Int(attr_axis)}});
  }
  // An embedding lookup: rows of 1023 elements.
  std::mt19937 rng(9);
  ExpectMatches("Gather",
                {RandomTensor(rng, DType::kF32, Shape{50, 1023}), RandomIndices(rng, DType::kI64, Shape{4, 17}, 50)},
                {{"axis", AttrValue::Int(0)}});
}

TEST_P(IndexingKernelsTest, GatherElementsRandom) {
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 4);
    const DType dtype = kTestDTypes[seed % 5];
    const DType index_dtype = seed % 2 ? DType::kI32 : DType::kI64;
    Shape data_shape = RandomShape(rng, rank);
    const int axis = static_cast<int>(rng() % rank);
    if (data_shape.dim(axis) == 0) data_shape.set_dim(axis, 3);
    // Indices dims: <= the data's off the axis, anything along it.
    Shape index_shape = data_shape;
    for (int a = 0; a < rank; ++a) {
      index_shape.set_dim(
          a, a == axis ? static_cast<int64_t>(rng() % 6) : static_cast<int64_t>(rng() % (data_shape.dim(a) + 1)));
    }
    const int64_t attr_axis = rng() % 2 ? axis : axis - rank;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), data_shape.ToString(), " indices ",
                              DTypeName(index_dtype), index_shape.ToString(), " axis=", attr_axis));
    ExpectMatches(
        "GatherElements",
        {RandomTensor(rng, dtype, data_shape), RandomIndices(rng, index_dtype, index_shape, data_shape.dim(axis))},
        {{"axis", AttrValue::Int(attr_axis)}});
  }
}

TEST_P(IndexingKernelsTest, ScatterElementsEveryReductionWithDuplicates) {
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    for (uint32_t seed = 1; seed <= 50; ++seed) {
      std::mt19937 rng(seed);
      const int rank = 1 + static_cast<int>(seed % 4);
      const DType dtype = kTestDTypes[seed % 5];
      const DType index_dtype = seed % 2 ? DType::kI32 : DType::kI64;
      Shape data_shape = RandomShape(rng, rank);
      const int axis = static_cast<int>(rng() % rank);
      // A short axis and a long indices axis: many duplicate targets.
      data_shape.set_dim(axis, 1 + static_cast<int64_t>(rng() % 3));
      Shape index_shape = data_shape;
      for (int a = 0; a < rank; ++a) {
        index_shape.set_dim(
            a, a == axis ? static_cast<int64_t>(rng() % 7) : static_cast<int64_t>(rng() % (data_shape.dim(a) + 1)));
      }
      const int64_t attr_axis = rng() % 2 ? axis : axis - rank;
      SCOPED_TRACE(absl::StrCat("seed=", seed, " reduction=", reduction, " ", DTypeName(dtype), data_shape.ToString(),
                                " indices ", DTypeName(index_dtype), index_shape.ToString(), " axis=", attr_axis));
      ExpectMatches("ScatterElements",
                    {RandomTensor(rng, dtype, data_shape, true),
                     RandomIndices(rng, index_dtype, index_shape, data_shape.dim(axis)),
                     RandomTensor(rng, dtype, index_shape, true)},
                    {{"axis", AttrValue::Int(attr_axis)}, {"reduction", AttrValue::String(reduction)}});
    }
  }
  // A wide inner extent: several lane blocks per outer index.
  std::mt19937 rng(11);
  ExpectMatches(
      "ScatterElements",
      {RandomTensor(rng, DType::kF32, Shape{2, 3, 1023}, true), RandomIndices(rng, DType::kI64, Shape{2, 5, 1023}, 3),
       RandomTensor(rng, DType::kF32, Shape{2, 5, 1023}, true)},
      {{"axis", AttrValue::Int(1)}, {"reduction", AttrValue::String("add")}});
}

TEST_P(IndexingKernelsTest, OutOfRangeIndicesAreTheReferencesError) {
  std::mt19937 rng(4);
  const Tensor data = RandomTensor(rng, DType::kF32, Shape{3, 4});
  for (int64_t bad : {3, -4, 100}) {
    SCOPED_TRACE(absl::StrCat("index=", bad));
    const Tensor i64 = Tensor::FromVector<int64_t>(Shape{2}, {0, bad});
    const Tensor i32 = Tensor::FromVector<int32_t>(Shape{2}, {0, static_cast<int32_t>(bad)});
    ExpectSameError("Gather", {data, i64}, {{"axis", AttrValue::Int(0)}});
    ExpectSameError("Gather", {data, i32}, {{"axis", AttrValue::Int(0)}});
    const Tensor e = Tensor::FromVector<int64_t>(Shape{1, 2}, {0, bad});
    ExpectSameError("GatherElements", {data, e}, {{"axis", AttrValue::Int(0)}});
    ExpectSameError("ScatterElements", {data, e, RandomTensor(rng, DType::kF32, Shape{1, 2})},
                    {{"axis", AttrValue::Int(0)}});
  }
  ExpectSameError("ScatterElements",
                  {data, Tensor::FromVector<int64_t>(Shape{1, 1}, {0}), RandomTensor(rng, DType::kF32, Shape{1, 1})},
                  {{"axis", AttrValue::Int(0)}, {"reduction", AttrValue::String("avg")}});
}

TEST_P(IndexingKernelsTest, OneHotEveryAxisAndValueDType) {
  uint32_t seed = 600;
  for (int rank : {0, 1, 2, 3}) {
    for (DType index_dtype : {DType::kI64, DType::kI32}) {
      for (DType value_dtype : kTestDTypes) {
        ++seed;
        std::mt19937 rng(seed);
        const Shape shape = RandomShape(rng, rank, 256);
        const int64_t depth = 1 + static_cast<int64_t>(rng() % 12);
        // Indices in [-depth - 2, depth + 2): negative ones count from the end, the rest
        // outside [-depth, depth) leave their row all off.
        Tensor indices = RandomIndices(rng, index_dtype, shape, depth + 2);
        const Tensor depth_tensor =
            rng() % 2 == 0 ? Tensor::Scalar(static_cast<float>(depth)) : Tensor::FromVector<int64_t>(Shape{1}, {depth});
        const Tensor values = RandomTensor(rng, value_dtype, Shape{2});
        for (int64_t axis = -rank - 1; axis <= rank; ++axis) {
          SCOPED_TRACE(absl::StrCat("seed=", seed, " shape=", shape.ToString(), " depth=", depth, " axis=", axis,
                                    " values=", DTypeName(value_dtype)));
          ExpectMatches("OneHot", {indices, depth_tensor, values}, {{"axis", AttrValue::Int(axis)}});
        }
      }
    }
  }
}

TEST_P(IndexingKernelsTest, OneHotBadInputsAreTheReferencesError) {
  const Tensor indices = Tensor::FromVector<int64_t>(Shape{2}, {0, 1});
  const Tensor values = Tensor::FromVector<float>(Shape{2}, {0.0f, 1.0f});
  ExpectSameError("OneHot", {indices, Tensor::Scalar(0.0f), values}, {});  // depth < 1
  ExpectSameError("OneHot", {indices, Tensor::FromVector<float>(Shape{2}, {3.0f, 3.0f}), values}, {});
  ExpectSameError("OneHot", {indices, Tensor::Scalar(3.0f), Tensor::FromVector<float>(Shape{3}, {0, 1, 2})}, {});
}

TSR_INSTANTIATE_FOR_ALL_ISAS(IndexingKernelsTest);

}  // namespace
}  // namespace tsr
