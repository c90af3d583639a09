// Tests of the CPU layout kernels (kernels/cpu/layout_kernels.cc: Transpose, Concat,
// Split, Slice, Pad, Tile, Expand) against the reference kernels, bit for bit, on
// randomized shapes (seeds printed) for 1-, 2-, 4- and 8-byte dtypes, at every ISA
// level; and of their errors, which must be the reference's.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// Random bytes (bool: 0 or 1), so every bit of every element is checked.
Tensor RandomTensor(std::mt19937& rng, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  unsigned char* p = static_cast<unsigned char*>(t.raw_data());
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < t.num_bytes(); ++i)
    p[i] = static_cast<unsigned char>(dtype == DType::kBool ? byte(rng) & 1 : byte(rng));
  return t;
}

Tensor I64(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// The cpu kernel against the reference, bitwise, at 1 and 3 threads.
void ExpectMatches(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs = {}) {
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
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) EXPECT_TRUE((*got)[i].BitwiseEquals((*want)[i])) << op << " output " << i;
}

// Both devices fail with the same status.
void ExpectSameError(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                     const AttrMap& attrs = {}) {
  SCOPED_TRACE(op);
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

// A random shape of `rank` dims drawn from small sizes (0 with probability ~1/16), with
// at most `max_elements` elements.
Shape RandomShape(std::mt19937& rng, int rank, int64_t max_elements = 4096) {
  static constexpr int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
  while (true) {
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      int64_t d = kSizes[rng() % 10];
      if (rng() % 16 == 0) d = 0;
      dims.push_back(d);
      n *= d;
    }
    if (n <= max_elements) return Shape(dims);
  }
}

std::string Str(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

class LayoutKernelsTest : public CpuIsaTest {};

TEST_P(LayoutKernelsTest, TransposeAllPermsOfRank3And4) {
  for (int rank : {3, 4}) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    uint32_t seed = 100 * rank;
    do {
      for (DType dtype : kTestDTypes) {
        std::mt19937 rng(++seed);
        const Shape shape = RandomShape(rng, rank);
        SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " perm=", Str(perm)));
        ExpectMatches("Transpose", {RandomTensor(rng, dtype, shape)}, {{"perm", AttrValue::Ints(perm)}});
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_P(LayoutKernelsTest, TransposeRandomPermsOfRank0To6) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int rank = static_cast<int>(seed % 7);
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const DType dtype = kTestDTypes[seed % 5];
    const Shape shape = RandomShape(rng, rank);
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " perm=", Str(perm)));
    ExpectMatches("Transpose", {RandomTensor(rng, dtype, shape)}, {{"perm", AttrValue::Ints(perm)}});
    // Without 'perm': the axes reversed.
    ExpectMatches("Transpose", {RandomTensor(rng, dtype, shape)});
  }
}

// Shapes big enough for several 64x64 blocks, the 8x8 micro-kernel and ragged edges.
TEST_P(LayoutKernelsTest, TransposeBlockedShapes) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {Shape{3, 130, 67}, {0, 2, 1}},     {Shape{2, 1023, 3}, {0, 2, 1}},     {Shape{17, 1023}, {1, 0}},
      {Shape{2, 8, 9, 17}, {0, 2, 3, 1}}, {Shape{2, 17, 9, 8}, {0, 3, 1, 2}}, {Shape{65, 3, 129}, {2, 1, 0}}};
  uint32_t seed = 7;
  for (const auto& [shape, perm] : cases) {
    for (DType dtype : kTestDTypes) {
      std::mt19937 rng(++seed);
      SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " perm=", Str(perm)));
      ExpectMatches("Transpose", {RandomTensor(rng, dtype, shape)}, {{"perm", AttrValue::Ints(perm)}});
    }
  }
}

TEST_P(LayoutKernelsTest, ConcatRandom) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 5);
    const DType dtype = kTestDTypes[seed % 5];
    const Shape base = RandomShape(rng, rank, 1024);
    const int axis = static_cast<int>(rng() % rank);
    const int num = 1 + static_cast<int>(rng() % 4);
    std::vector<std::optional<Tensor>> inputs;
    std::string shapes;
    for (int i = 0; i < num; ++i) {
      Shape s = base;
      s.set_dim(axis, static_cast<int64_t>(rng() % 4));  // 0 included
      if (seed % 7 == 0) s.set_dim(axis, 1023);
      absl::StrAppend(&shapes, s.ToString());
      inputs.push_back(RandomTensor(rng, dtype, s));
    }
    const int64_t attr_axis = seed % 2 ? axis : axis - rank;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), " ", shapes, " axis=", attr_axis));
    ExpectMatches("Concat", inputs, {{"axis", AttrValue::Int(attr_axis)}});
  }
}

TEST_P(LayoutKernelsTest, SplitRandom) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 5);
    const DType dtype = kTestDTypes[seed % 5];
    Shape shape = RandomShape(rng, rank, 2048);
    const int axis = static_cast<int>(rng() % rank);
    if (shape.dim(axis) == 0) shape.set_dim(axis, 5);
    const int64_t attr_axis = seed % 2 ? axis : axis - rank;
    const Tensor in = RandomTensor(rng, dtype, shape);
    // Sizes from the 'split' input (zeros allowed) ...
    std::vector<int64_t> sizes;
    int64_t left = shape.dim(axis);
    while (left > 0) {
      const int64_t s = std::min<int64_t>(left, static_cast<int64_t>(rng() % 4));
      sizes.push_back(s);
      left -= s;
    }
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " axis=", attr_axis,
                              " split=", Str(sizes)));
    ExpectMatches("Split", {in, I64(sizes)}, {{"axis", AttrValue::Int(attr_axis)}});
    // ... and from num_outputs (chunks of ceil(d / n)).
    // A count the op accepts: the last chunk of ceil(d / n) must not be negative.
    const int64_t d = shape.dim(axis);
    int64_t n = 1 + static_cast<int64_t>(rng() % std::min<int64_t>(d, 4));
    while (d - (n - 1) * ((d + n - 1) / n) < 0) --n;
    ExpectMatches("Split", {in}, {{"axis", AttrValue::Int(attr_axis)}, {"num_outputs", AttrValue::Int(n)}});
  }
}

TEST_P(LayoutKernelsTest, SliceRandom) {
  std::uniform_int_distribution<int64_t> bound(-25, 25);
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    const int rank = 1 + static_cast<int>(seed % 6);
    const DType dtype = kTestDTypes[seed % 5];
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
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " starts=", Str(starts),
                              " ends=", Str(ends), " axes=", Str(axes), " steps=", Str(steps)));
    const Tensor in = RandomTensor(rng, dtype, shape);
    ExpectMatches("Slice", {in, I64(starts), I64(ends), I64(axes), I64(steps)});
    // Without steps, and without axes (the first k axes).
    ExpectMatches("Slice", {in, I64(starts), I64(ends), I64(axes), std::nullopt});
    ExpectMatches("Slice", {in, I64(starts), I64(ends)});
  }
  // A contiguous half of a large tensor: one long run split over the threads.
  std::mt19937 rng(5);
  ExpectMatches("Slice", {RandomTensor(rng, DType::kF32, Shape{1024, 1024}), I64({0}), I64({512})});
}

TEST_P(LayoutKernelsTest, PadEveryMode) {
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    for (uint32_t seed = 1; seed <= 40; ++seed) {
      std::mt19937 rng(seed);
      const int rank = static_cast<int>(seed % 5);
      const DType dtype = kTestDTypes[seed % 5];
      Shape shape = seed % 9 == 0 && rank == 2 ? Shape{2, 1023} : RandomShape(rng, rank, 1024);
      std::vector<int64_t> axes;
      for (int a = 0; a < rank; ++a) {
        if (rng() % 3 != 0) axes.push_back(rng() % 2 ? a : a - rank);
      }
      std::shuffle(axes.begin(), axes.end(), rng);
      std::vector<int64_t> pads(2 * axes.size());
      for (size_t j = 0; j < pads.size(); ++j) {
        const int a = static_cast<int>((axes[j % axes.size()] + rank) % rank);
        const int64_t d = shape.dim(a);
        if (mode == "reflect") {
          pads[j] = d == 0 ? 0 : static_cast<int64_t>(rng() % d);  // the reference needs pads < d
        } else if (mode != "constant" && d == 0) {
          pads[j] = 0;
        } else {
          pads[j] = static_cast<int64_t>(rng() % (d + 5)) - (rng() % 4 == 0 ? std::min<int64_t>(d, 2) : 0);
        }
      }
      // Negative pads (crops) must not make an axis negative.
      for (size_t j = 0; j < axes.size(); ++j) {
        const int a = static_cast<int>((axes[j] + rank) % rank);
        while (shape.dim(a) + pads[j] + pads[j + axes.size()] < 0) ++pads[j];
      }
      SCOPED_TRACE(absl::StrCat("seed=", seed, " mode=", mode, " ", DTypeName(dtype), shape.ToString(),
                                " pads=", Str(pads), " axes=", Str(axes)));
      const Tensor in = RandomTensor(rng, dtype, shape);
      const AttrMap attrs = {{"mode", AttrValue::String(mode)}};
      ExpectMatches("Pad", {in, I64(pads), RandomTensor(rng, dtype, Shape{}), I64(axes)}, attrs);
      if (axes.size() == static_cast<size_t>(rank)) {
        // Without axes (all of them, in order) and without a constant (zeros).
        std::vector<int64_t> all_pads(2 * rank);
        for (size_t j = 0; j < axes.size(); ++j) {
          const int a = static_cast<int>((axes[j] + rank) % rank);
          all_pads[a] = pads[j];
          all_pads[a + rank] = pads[j + axes.size()];
        }
        ExpectMatches("Pad", {in, I64(all_pads)}, attrs);
      }
    }
  }
}

TEST_P(LayoutKernelsTest, TileRandom) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int rank = static_cast<int>(seed % 5);
    const DType dtype = kTestDTypes[seed % 5];
    const Shape shape = RandomShape(rng, rank, 256);
    std::vector<int64_t> repeats;
    for (int a = 0; a < rank; ++a) repeats.push_back(static_cast<int64_t>(rng() % 4));
    if (seed % 3 == 0) std::fill(repeats.begin(), repeats.end(), 1);
    if (seed % 3 == 1 && rank > 0) repeats.back() = std::max<int64_t>(1, repeats.back());
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), shape.ToString(), " repeats=", Str(repeats)));
    ExpectMatches("Tile", {RandomTensor(rng, dtype, shape), I64(repeats)});
  }
}

TEST_P(LayoutKernelsTest, ExpandRandom) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int rank = static_cast<int>(seed % 6);
    const DType dtype = kTestDTypes[seed % 5];
    const Shape out = RandomShape(rng, rank, 2048);
    // The input drops some leading dims and has 1 where it broadcasts; the shape
    // input may itself say 1 where the input is larger.
    const int drop = rank == 0 ? 0 : static_cast<int>(rng() % (rank + 1));
    std::vector<int64_t> in_dims, shape_dims = out.dims();
    for (int a = drop; a < rank; ++a) in_dims.push_back(rng() % 2 ? 1 : out.dim(a));
    for (int a = drop; a < rank; ++a) {
      if (rng() % 4 == 0) shape_dims[a] = 1;
    }
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), Str(in_dims), " shape=", Str(shape_dims)));
    ExpectMatches("Expand", {RandomTensor(rng, dtype, Shape(in_dims)), I64(shape_dims)});
  }
}

TEST_P(LayoutKernelsTest, ErrorsAreTheReferences) {
  std::mt19937 rng(3);
  const Tensor x = RandomTensor(rng, DType::kF32, Shape{2, 3, 4});
  ExpectSameError("Transpose", {x}, {{"perm", AttrValue::Ints({0, 0, 1})}});
  ExpectSameError("Concat", {x, RandomTensor(rng, DType::kF32, Shape{2, 4, 4})}, {{"axis", AttrValue::Int(0)}});
  ExpectSameError("Concat", {x}, {{"axis", AttrValue::Int(3)}});
  ExpectSameError("Slice", {x, I64({0}), I64({1}), I64({0}), I64({0})});
  ExpectSameError("Pad", {x, I64({0, 3, 0, 0, 0, 0})}, {{"mode", AttrValue::String("reflect")}});
  ExpectSameError("Tile", {x, I64({1, 2})});
}

TSR_INSTANTIATE_FOR_ALL_ISAS(LayoutKernelsTest);

}  // namespace
}  // namespace tsr
