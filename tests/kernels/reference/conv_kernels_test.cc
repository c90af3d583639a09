// Reference Conv and ConvTranspose kernels (kernels/reference/conv_kernels.cc):
// hand-computed cases, a 1x1 Conv against MatMul, grouped Conv against per-group
// Convs, randomized 1-D/2-D/3-D Convs against a direct loop over an explicitly padded
// input, and ConvTranspose as the adjoint of Conv: <Conv(x), y> == <x, ConvT(y)>.
#include <cstdint>
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
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectNear;
using ::tsr::testing::Random;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

// Absolute tolerance of ExpectNear where a test gives none.
constexpr double kTol = 1e-10;

double Dot(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double s = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) s += a.GetAsDouble(i) * b.GetAsDouble(i);
  return s;
}

TEST(ConvKernelTest, HandComputed2D) {
  // X = [[1,2,3],[4,5,6],[7,8,9]], W = ones(2x2): sums of each 2x2 block.
  Tensor x = Tensor::FromVector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::FromVector<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = RunOne("Conv", {x, w});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  ExpectNear(y, {12, 16, 24, 28}, kTol);
  // Pads of 1, stride 2, bias 100: the corners of the 4x4 padded-window grid.
  Tensor yp = RunOne("Conv", {x, w, Tensor::FromVector<float>({1}, {100})},
                     {{"pads", AttrValue::Ints({1, 1, 1, 1})}, {"strides", AttrValue::Ints({2, 2})}});
  EXPECT_EQ(yp.shape(), (Shape{1, 1, 2, 2}));
  ExpectNear(yp, {101, 105, 111, 128}, kTol);
  // Dilation 2 over a 3x3 input with a 2x2 kernel reads the four corners.
  Tensor yd = RunOne("Conv", {x, w}, {{"dilations", AttrValue::Ints({2, 2})}});
  ExpectNear(yd, {1 + 3 + 7 + 9}, kTol);
}

TEST(ConvKernelTest, HandComputed1DWithSameUpperAndLower) {
  Tensor x = Tensor::FromVector<double>({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = Tensor::FromVector<double>({1, 1, 2}, {1, 10});
  // SAME_UPPER: one pad unit at the end -> [1+20, 2+30, 3+40, 4+0].
  ExpectNear(RunOne("Conv", {x, w}, {{"auto_pad", AttrValue::String("SAME_UPPER")}}), {21, 32, 43, 4}, kTol);
  // SAME_LOWER: the unit at the beginning -> [0+10, 1+20, 2+30, 3+40].
  ExpectNear(RunOne("Conv", {x, w}, {{"auto_pad", AttrValue::String("SAME_LOWER")}}), {10, 21, 32, 43}, kTol);
  ExpectNear(RunOne("Conv", {x, w}, {{"auto_pad", AttrValue::String("VALID")}, {"strides", AttrValue::Ints({2})}}),
             {21, 43}, kTol);
}

TEST(ConvKernelTest, OneByOneConvEqualsMatMul) {
  constexpr uint32_t kSeed = 11;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  const Tensor x = Random({2, 3, 4, 5}, rng);
  const Tensor w = Random({6, 3, 1, 1}, rng);
  Tensor y = RunOne("Conv", {x, w});
  ASSERT_EQ(y.shape(), (Shape{2, 6, 4, 5}));
  const Tensor w2 = *w.Reshaped({6, 3});
  for (int64_t n = 0; n < 2; ++n) {
    const std::vector<double> xv = Values(x);
    std::vector<double> xn(xv.begin() + n * 60, xv.begin() + (n + 1) * 60);
    Tensor prod = RunOne("MatMul", {w2, Tensor::FromVector<double>({3, 20}, xn)});  // [6, 20]
    for (int64_t i = 0; i < 120; ++i) EXPECT_NEAR(y.GetAsDouble(n * 120 + i), prod.GetAsDouble(i), 1e-12);
  }
}

TEST(ConvKernelTest, GroupedConvEqualsConcatenatedPerGroupConvs) {
  constexpr uint32_t kSeed = 23;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  constexpr int64_t kGroups = 3, kCin = 2, kCout = 2;  // per group
  const Tensor x = Random({2, kGroups * kCin, 5, 4}, rng);
  const Tensor w = Random({kGroups * kCout, kCin, 3, 2}, rng);
  const Tensor b = Random({kGroups * kCout}, rng);
  const AttrMap attrs{{"pads", AttrValue::Ints({1, 0, 1, 1})}, {"strides", AttrValue::Ints({2, 1})}};
  AttrMap grouped = attrs;
  grouped["group"] = AttrValue::Int(kGroups);
  Tensor y = RunOne("Conv", {x, w, b}, grouped);
  ASSERT_EQ(y.shape().rank(), 4);
  const int64_t out_plane = y.shape().dim(2) * y.shape().dim(3);
  const std::vector<double> xv = Values(x), wv = Values(w), bv = Values(b);
  for (int64_t g = 0; g < kGroups; ++g) {
    std::vector<double> xg, wg(wv.begin() + g * kCout * kCin * 6, wv.begin() + (g + 1) * kCout * kCin * 6);
    for (int64_t n = 0; n < 2; ++n) {
      xg.insert(xg.end(), xv.begin() + (n * kGroups + g) * kCin * 20, xv.begin() + (n * kGroups + g + 1) * kCin * 20);
    }
    std::vector<double> bg(bv.begin() + g * kCout, bv.begin() + (g + 1) * kCout);
    Tensor yg = RunOne("Conv",
                       {Tensor::FromVector<double>({2, kCin, 5, 4}, xg),
                        Tensor::FromVector<double>({kCout, kCin, 3, 2}, wg), Tensor::FromVector<double>({kCout}, bg)},
                       attrs);
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < kCout * out_plane; ++i) {
        EXPECT_NEAR(y.GetAsDouble((n * kGroups + g) * kCout * out_plane + i), yg.GetAsDouble(n * kCout * out_plane + i),
                    1e-12);
      }
    }
  }
}

// Window parameters drawn for one randomized case over three spatial dims (1-D and
// 2-D cases leave the leading ones at size 1 with kernel 1 and are passed to the
// kernel without them).
struct RandomConv {
  int rank;  // spatial dims used: 1, 2 or 3
  int64_t batch, groups, cin, cout;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
  std::string auto_pad;
};

RandomConv DrawConv(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomConv c;
  c.rank = pick(1, 3);
  c.batch = pick(1, 2);
  c.groups = pick(1, 2);
  c.cin = pick(1, 2);
  c.cout = pick(1, 2);
  const char* pads[] = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  c.auto_pad = pads[pick(0, 4)];
  for (int i = 0; i < 3; ++i) {
    const bool used = i >= 3 - c.rank;
    c.k[i] = used ? pick(1, 3) : 1;
    c.s[i] = used ? pick(1, 2) : 1;
    c.d[i] = used ? pick(1, 2) : 1;
    c.in[i] = used ? pick((c.k[i] - 1) * c.d[i] + 1, 6) : 1;
    c.pb[i] = used && c.auto_pad == "NOTSET" ? pick(0, 2) : 0;
    c.pe[i] = used && c.auto_pad == "NOTSET" ? pick(0, 2) : 0;
  }
  return c;
}

// The test's own pads for auto_pad, from the ONNX formulas.
void ResolveAutoPad(RandomConv& c) {
  if (c.auto_pad != "SAME_UPPER" && c.auto_pad != "SAME_LOWER") return;
  for (int i = 3 - c.rank; i < 3; ++i) {
    const int64_t out = (c.in[i] + c.s[i] - 1) / c.s[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * c.s[i] + (c.k[i] - 1) * c.d[i] + 1 - c.in[i]);
    c.pb[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    c.pe[i] = total - c.pb[i];
  }
}

TEST(ConvKernelTest, RandomizedMatchesDirectLoopOverPaddedInput) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    RandomConv c = DrawConv(rng);
    const int first = 3 - c.rank;
    std::vector<int64_t> x_dims = {c.batch, c.groups * c.cin}, w_dims = {c.groups * c.cout, c.cin};
    std::vector<int64_t> ks, ss, ds, pads_b, pads_e;
    for (int i = first; i < 3; ++i) {
      x_dims.push_back(c.in[i]);
      w_dims.push_back(c.k[i]);
      ss.push_back(c.s[i]);
      ds.push_back(c.d[i]);
      pads_b.push_back(c.pb[i]);
      pads_e.push_back(c.pe[i]);
    }
    std::vector<int64_t> pads = pads_b;
    pads.insert(pads.end(), pads_e.begin(), pads_e.end());
    const Tensor x = Random(Shape(x_dims), rng);
    const Tensor w = Random(Shape(w_dims), rng);
    const Tensor b = Random({c.groups * c.cout}, rng);
    AttrMap attrs{{"strides", AttrValue::Ints(ss)},
                  {"dilations", AttrValue::Ints(ds)},
                  {"group", AttrValue::Int(c.groups)},
                  {"auto_pad", AttrValue::String(c.auto_pad)}};
    if (c.auto_pad == "NOTSET") attrs["pads"] = AttrValue::Ints(pads);
    SCOPED_TRACE(absl::StrCat("X ", Shape(x_dims).ToString(), " W ", Shape(w_dims).ToString(), " strides ",
                              absl::StrJoin(ss, ","), " dilations ", absl::StrJoin(ds, ","), " pads ",
                              absl::StrJoin(pads, ","), " auto_pad ", c.auto_pad, " group ", c.groups));
    Tensor y = RunOne("Conv", {x, w, b}, attrs);
    ResolveAutoPad(c);

    // Materialize the zero-padded input, then slide the dilated kernel over it
    // with no bounds checks at all.
    int64_t padded[3], out[3];
    for (int i = 0; i < 3; ++i) {
      padded[i] = c.in[i] + c.pb[i] + c.pe[i];
      out[i] = (padded[i] - (c.k[i] - 1) * c.d[i] - 1) / c.s[i] + 1;
    }
    const int64_t cin_total = c.groups * c.cin, cout_total = c.groups * c.cout;
    std::vector<double> xp(c.batch * cin_total * padded[0] * padded[1] * padded[2], 0.0);
    const std::vector<double> xv = Values(x), wv = Values(w), bv = Values(b);
    for (int64_t nc = 0; nc < c.batch * cin_total; ++nc) {
      for (int64_t i0 = 0; i0 < c.in[0]; ++i0) {
        for (int64_t i1 = 0; i1 < c.in[1]; ++i1) {
          for (int64_t i2 = 0; i2 < c.in[2]; ++i2) {
            xp[((nc * padded[0] + i0 + c.pb[0]) * padded[1] + i1 + c.pb[1]) * padded[2] + i2 + c.pb[2]] =
                xv[((nc * c.in[0] + i0) * c.in[1] + i1) * c.in[2] + i2];
          }
        }
      }
    }
    std::vector<double> expected;
    for (int64_t n = 0; n < c.batch; ++n) {
      for (int64_t m = 0; m < cout_total; ++m) {
        const int64_t g = m / c.cout;
        for (int64_t o0 = 0; o0 < out[0]; ++o0) {
          for (int64_t o1 = 0; o1 < out[1]; ++o1) {
            for (int64_t o2 = 0; o2 < out[2]; ++o2) {
              double s = bv[m];
              for (int64_t ci = 0; ci < c.cin; ++ci) {
                for (int64_t k0 = 0; k0 < c.k[0]; ++k0) {
                  for (int64_t k1 = 0; k1 < c.k[1]; ++k1) {
                    for (int64_t k2 = 0; k2 < c.k[2]; ++k2) {
                      const int64_t p0 = o0 * c.s[0] + k0 * c.d[0], p1 = o1 * c.s[1] + k1 * c.d[1],
                                    p2 = o2 * c.s[2] + k2 * c.d[2];
                      const int64_t plane = n * cin_total + g * c.cin + ci;
                      s += xp[((plane * padded[0] + p0) * padded[1] + p1) * padded[2] + p2] *
                           wv[(((m * c.cin + ci) * c.k[0] + k0) * c.k[1] + k1) * c.k[2] + k2];
                    }
                  }
                }
              }
              expected.push_back(s);
            }
          }
        }
      }
    }
    ExpectNear(y, expected, kTol);
  }
}

TEST(ConvKernelTest, HalfPrecisionDTypes) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x(dtype, {1, 1, 3}), w(dtype, {1, 1, 2});
    const float xs[] = {1, 2, 3}, ws[] = {0.5f, -1};
    for (int i = 0; i < 3; ++i) {
      if (dtype == DType::kF16) {
        x.data<Float16>()[i] = Float16::FromFloat(xs[i]);
        if (i < 2) w.data<Float16>()[i] = Float16::FromFloat(ws[i]);
      } else {
        x.data<BFloat16>()[i] = BFloat16::FromFloat(xs[i]);
        if (i < 2) w.data<BFloat16>()[i] = BFloat16::FromFloat(ws[i]);
      }
    }
    Tensor y = RunOne("Conv", {x, w});
    ASSERT_EQ(y.dtype(), dtype);
    ExpectNear(y, {-1.5, -2}, kTol);
  }
}

TEST(ConvKernelTest, ZeroSizedBatch) {
  Tensor y = RunOne("Conv", {Tensor(DType::kF32, {0, 2, 4, 4}), Tensor(DType::kF32, {3, 2, 3, 3})});
  EXPECT_EQ(y.shape(), (Shape{0, 3, 2, 2}));
}

TEST(ConvTransposeKernelTest, HandComputed) {
  Tensor x = Tensor::FromVector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::FromVector<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  // Stride 1: each input spreads over a 2x2 block; overlaps add up.
  Tensor y = RunOne("ConvTranspose", {x, w});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  ExpectNear(y, {1, 3, 2, 4, 10, 6, 3, 7, 4}, kTol);
  // Stride 2: disjoint 2x2 blocks; bias 0.5 everywhere.
  Tensor y2 =
      RunOne("ConvTranspose", {x, w, Tensor::FromVector<float>({1}, {0.5})}, {{"strides", AttrValue::Ints({2, 2})}});
  EXPECT_EQ(y2.shape(), (Shape{1, 1, 4, 4}));
  ExpectNear(y2, {1.5, 1.5, 2.5, 2.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5, 3.5, 3.5, 4.5, 4.5}, kTol);
  // output_padding adds a last row/column that only the bias reaches here.
  Tensor y3 = RunOne("ConvTranspose", {x, w, Tensor::FromVector<float>({1}, {0.5})},
                     {{"strides", AttrValue::Ints({2, 2})}, {"output_padding", AttrValue::Ints({1, 1})}});
  EXPECT_EQ(y3.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_NEAR(y3.GetAsDouble(4), 0.5, 1e-12);
  EXPECT_NEAR(y3.GetAsDouble(24), 0.5, 1e-12);
  EXPECT_NEAR(y3.GetAsDouble(18), 4.5, 1e-12);
}

TEST(ConvTransposeKernelTest, OutputShapeDerivesThePads) {
  // 1-D, x=[1,2,3], w=[1,10,100], stride 2: the full output has 7 positions
  //   [1, 10, 100+2, 20, 200+3, 30, 300].
  Tensor x = Tensor::FromVector<double>({1, 1, 3}, {1, 2, 3});
  Tensor w = Tensor::FromVector<double>({1, 1, 3}, {1, 10, 100});
  const AttrMap strides{{"strides", AttrValue::Ints({2})}};
  ExpectNear(RunOne("ConvTranspose", {x, w}, strides), {1, 10, 102, 20, 203, 30, 300}, kTol);
  // output_shape 4 drops 3 positions: 2 at the beginning (the odd unit goes there, as ONNX
  // writes it), 1 at the end.
  AttrMap shaped = strides;
  shaped["output_shape"] = AttrValue::Ints({4});
  ExpectNear(RunOne("ConvTranspose", {x, w}, shaped), {102, 20, 203, 30}, kTol);
  // Explicit pads 2+1 give the same window.
  AttrMap padded = strides;
  padded["pads"] = AttrValue::Ints({2, 1});
  ExpectNear(RunOne("ConvTranspose", {x, w}, padded), {102, 20, 203, 30}, kTol);
  // SAME_UPPER: output 3*2 = 6, total pad 1 at the end.
  AttrMap same = strides;
  same["auto_pad"] = AttrValue::String("SAME_UPPER");
  ExpectNear(RunOne("ConvTranspose", {x, w}, same), {1, 10, 102, 20, 203, 30}, kTol);
}

TEST(ConvTransposeKernelTest, IsTheAdjointOfConv) {
  for (uint32_t seed = 100; seed < 140; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    RandomConv c = DrawConv(rng);
    c.auto_pad = "NOTSET";
    const int first = 3 - c.rank;
    std::vector<int64_t> x_dims = {c.batch, c.groups * c.cin}, w_dims = {c.groups * c.cout, c.cin};
    std::vector<int64_t> ss, ds, pads(2 * c.rank), output_padding;
    for (int i = first; i < 3; ++i) {
      x_dims.push_back(c.in[i]);
      w_dims.push_back(c.k[i]);
      ss.push_back(c.s[i]);
      ds.push_back(c.d[i]);
      pads[i - first] = c.pb[i];
      pads[c.rank + i - first] = c.pe[i];
      // ConvTranspose reaches back to the Conv input size with output_padding = the
      // positions Conv's last stride step skipped.
      output_padding.push_back((c.in[i] + c.pb[i] + c.pe[i] - (c.k[i] - 1) * c.d[i] - 1) % c.s[i]);
    }
    const Tensor x = Random(Shape(x_dims), rng);
    const Tensor w = Random(Shape(w_dims), rng);
    AttrMap attrs{{"strides", AttrValue::Ints(ss)},
                  {"dilations", AttrValue::Ints(ds)},
                  {"group", AttrValue::Int(c.groups)},
                  {"pads", AttrValue::Ints(pads)}};
    Tensor cx = RunOne("Conv", {x, w}, attrs);
    const Tensor y = Random(cx.shape(), rng);
    AttrMap t_attrs = attrs;
    t_attrs["output_padding"] = AttrValue::Ints(output_padding);
    absl::StatusOr<std::vector<Tensor>> ty = RunOp("ConvTranspose", {y, w}, t_attrs);
    ASSERT_TRUE(ty.ok()) << ty.status();
    ASSERT_EQ((*ty)[0].shape(), x.shape());
    EXPECT_NEAR(Dot(cx, y), Dot(x, (*ty)[0]), 1e-10);
  }
}

}  // namespace
}  // namespace tsr
