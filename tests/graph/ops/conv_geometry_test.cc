// Sliding-window geometry: output sizes and resolved pads for forward and
// transposed windows, auto_pad splitting, ceil_mode, and the validation errors.
#include "graph/ops/conv_geometry.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

WindowSpec Spec(std::vector<int64_t> kernel, std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
                std::vector<int64_t> dilations = {}) {
  WindowSpec s;
  s.kernel = std::move(kernel);
  s.strides = std::move(strides);
  s.pads = std::move(pads);
  s.dilations = std::move(dilations);
  return s;
}

template <typename T>
void ExpectInvalid(const absl::StatusOr<T>& result, absl::string_view needle) {
  ASSERT_FALSE(result.ok()) << "expected an error containing \"" << needle << "\"";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr(needle));
}

TEST(AutoPadTest, ParsesOnnxNamesAndRejectsOthers) {
  for (AutoPad p : {AutoPad::kNotSet, AutoPad::kSameUpper, AutoPad::kSameLower, AutoPad::kValid}) {
    absl::StatusOr<AutoPad> parsed = ParseAutoPad(AutoPadName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  ExpectInvalid(ParseAutoPad("same_upper"), "auto_pad is 'same_upper'");
  ExpectInvalid(ParseAutoPad("SAME"), "NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

TEST(WindowGeometryTest, UnpaddedUnitStride) {
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({28, 28}, Spec({5, 5}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(24, 24));
  EXPECT_THAT(g->strides, ElementsAre(1, 1));
  EXPECT_THAT(g->dilations, ElementsAre(1, 1));
  EXPECT_THAT(g->pads_begin, ElementsAre(0, 0));
  EXPECT_THAT(g->pads_end, ElementsAre(0, 0));
  EXPECT_EQ(g->kernel_elements(), 25);
}

TEST(WindowGeometryTest, StridesAndAsymmetricPads) {
  // floor((7 + 1 + 2 - 3) / 2) + 1 = 4 and floor((9 + 0 + 0 - 3) / 3) + 1 = 3.
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({7, 9}, Spec({3, 3}, {2, 3}, {1, 0, 2, 0}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(4, 3));
  EXPECT_THAT(g->pads_begin, ElementsAre(1, 0));
  EXPECT_THAT(g->pads_end, ElementsAre(2, 0));
}

TEST(WindowGeometryTest, DilationWidensTheWindow) {
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({10}, Spec({3}, {}, {}, {2}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->effective_kernel(0), 5);
  EXPECT_THAT(g->output, ElementsAre(6));
}

TEST(WindowGeometryTest, SameUpperPutsTheOddPadAtTheEndSameLowerAtTheBeginning) {
  // Size 5, kernel 4, stride 1: 5 outputs need 3 padding units.
  WindowSpec spec = Spec({4});
  spec.auto_pad = AutoPad::kSameUpper;
  absl::StatusOr<WindowGeometry> upper = ComputeWindowGeometry({5}, spec);
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_THAT(upper->output, ElementsAre(5));
  EXPECT_THAT(upper->pads_begin, ElementsAre(1));
  EXPECT_THAT(upper->pads_end, ElementsAre(2));

  spec.auto_pad = AutoPad::kSameLower;
  absl::StatusOr<WindowGeometry> lower = ComputeWindowGeometry({5}, spec);
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_THAT(lower->output, ElementsAre(5));
  EXPECT_THAT(lower->pads_begin, ElementsAre(2));
  EXPECT_THAT(lower->pads_end, ElementsAre(1));
}

TEST(WindowGeometryTest, SameWithStrideGivesCeilOfInputOverStride) {
  // 8 / 2 = 4 outputs: (4 - 1) * 2 + 3 - 8 = 1 padding unit.
  WindowSpec spec = Spec({3}, {2});
  spec.auto_pad = AutoPad::kSameUpper;
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({8}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(4));
  EXPECT_THAT(g->pads_begin, ElementsAre(0));
  EXPECT_THAT(g->pads_end, ElementsAre(1));
  // ceil(7 / 2) = 4; a large stride needs no padding at all.
  g = ComputeWindowGeometry({7, 7}, [] {
    WindowSpec s = Spec({3, 1}, {2, 4});
    s.auto_pad = AutoPad::kSameLower;
    return s;
  }());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(4, 2));
  EXPECT_THAT(g->pads_begin, ElementsAre(1, 0));
  EXPECT_THAT(g->pads_end, ElementsAre(1, 0));
}

TEST(WindowGeometryTest, ValidPadsNothing) {
  WindowSpec spec = Spec({3}, {2});
  spec.auto_pad = AutoPad::kValid;
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({8}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(3));
  EXPECT_THAT(g->pads_begin, ElementsAre(0));
  EXPECT_THAT(g->pads_end, ElementsAre(0));
}

TEST(WindowGeometryTest, CeilModeRoundsUp) {
  WindowSpec spec = Spec({3}, {2});
  absl::StatusOr<WindowGeometry> floor = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_THAT(floor->output, ElementsAre(2));
  spec.ceil_mode = true;
  absl::StatusOr<WindowGeometry> ceil = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(ceil.ok()) << ceil.status();
  EXPECT_THAT(ceil->output, ElementsAre(3));
}

TEST(WindowGeometryTest, CeilModeDropsAWindowStartingInTheEndPadding) {
  // Size 6 padded by 2 at the end: ceil((8 - 3) / 2) + 1 = 4, but the 4th window
  // would start at 6, inside the padding, so 3 remain.
  WindowSpec spec = Spec({3}, {2}, {0, 2});
  spec.ceil_mode = true;
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(3));
  // With padding at the beginning the same window starts inside the input and stays.
  spec.pads = {2, 0};
  g = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(4));
}

TEST(WindowGeometryTest, CeilModeDoesNotChangeSameOrValid) {
  WindowSpec spec = Spec({3}, {2});
  spec.ceil_mode = true;
  spec.auto_pad = AutoPad::kValid;
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(2));
  spec.auto_pad = AutoPad::kSameUpper;
  g = ComputeWindowGeometry({6}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(3));
}

TEST(WindowGeometryTest, Errors) {
  ExpectInvalid(ComputeWindowGeometry({3, 3}, Spec({5, 3})), "the window spans 5");
  ExpectInvalid(ComputeWindowGeometry({4}, Spec({3}, {}, {}, {2})), "the window spans 5 (kernel 3, dilation 2)");
  ExpectInvalid(ComputeWindowGeometry({8, 8}, Spec({3})), "kernel_shape has 1 values");
  ExpectInvalid(ComputeWindowGeometry({8, 8}, Spec({3, 3}, {}, {1, 1})), "pads has 2 values [1,1] but 4");
  ExpectInvalid(ComputeWindowGeometry({8, 8}, Spec({3, 3}, {1})), "strides has 1 values");
  ExpectInvalid(ComputeWindowGeometry({8}, Spec({3}, {0})), "strides[0] is 0 but must be >= 1");
  ExpectInvalid(ComputeWindowGeometry({8}, Spec({0})), "kernel_shape[0] is 0");
  ExpectInvalid(ComputeWindowGeometry({8}, Spec({3}, {}, {}, {0})), "dilations[0] is 0");
  ExpectInvalid(ComputeWindowGeometry({8}, Spec({3}, {}, {-1, 0})), "pads[0] is -1");
  ExpectInvalid(ComputeWindowGeometry({8, kBatchDim}, Spec({3, 3})),
                "spatial dimension 1 is the symbolic batch dimension N");
  ExpectInvalid(ComputeWindowGeometry({8}, Spec({int64_t{1} << 41})), "above the limit");
  WindowSpec same = Spec({3}, {}, {1, 1});
  same.auto_pad = AutoPad::kSameUpper;
  ExpectInvalid(ComputeWindowGeometry({8}, same), "cannot be combined with auto_pad=SAME_UPPER");
  same.pads = {0, 0};  // explicit zeros are harmless
  EXPECT_TRUE(ComputeWindowGeometry({8}, same).ok());
  ExpectInvalid(ComputeWindowGeometry({0}, same), "gives an output of size 0");
}

TransposedWindowSpec TSpec(std::vector<int64_t> kernel, std::vector<int64_t> strides = {},
                           std::vector<int64_t> pads = {}) {
  TransposedWindowSpec s;
  s.window = Spec(std::move(kernel), std::move(strides), std::move(pads));
  return s;
}

TEST(TransposedWindowGeometryTest, FullOutputMinusPads) {
  // 2 * (3 - 1) + 3 = 7; pads 1+1 trim it to 5.
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry({3}, TSpec({3}, {2}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(7));
  g = ComputeTransposedWindowGeometry({3}, TSpec({3}, {2}, {1, 1}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(5));
}

TEST(TransposedWindowGeometryTest, OutputPaddingExtendsTheEnd) {
  TransposedWindowSpec spec = TSpec({3}, {2});
  spec.output_padding = {1};
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry({3}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(8));
  spec.output_padding = {2};
  ExpectInvalid(ComputeTransposedWindowGeometry({3}, spec), "output_padding[0] is 2 but must be smaller than stride 2");
}

TEST(TransposedWindowGeometryTest, SameGivesInputTimesStrideWithTheOddPadPlacedByMode) {
  // Full output 7, target 6: one unit of padding.
  TransposedWindowSpec spec = TSpec({3}, {2});
  spec.window.auto_pad = AutoPad::kSameUpper;
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry({3}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(6));
  EXPECT_THAT(g->pads_begin, ElementsAre(0));
  EXPECT_THAT(g->pads_end, ElementsAre(1));
  spec.window.auto_pad = AutoPad::kSameLower;
  g = ComputeTransposedWindowGeometry({3}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(6));
  EXPECT_THAT(g->pads_begin, ElementsAre(1));
  EXPECT_THAT(g->pads_end, ElementsAre(0));
}

TEST(TransposedWindowGeometryTest, ExplicitOutputShape) {
  TransposedWindowSpec spec = TSpec({3, 3}, {2, 2}, {1, 1, 1, 1});  // pads are ignored
  spec.output_shape = {6, 10};
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry({3, 3}, spec);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->output, ElementsAre(6, 10));
  // Without auto_pad the odd unit goes first (ONNX spec); a larger-than-full output
  // gets no padding.
  EXPECT_THAT(g->pads_begin, ElementsAre(1, 0));
  EXPECT_THAT(g->pads_end, ElementsAre(0, 0));
  spec.output_shape = {6};
  ExpectInvalid(ComputeTransposedWindowGeometry({3, 3}, spec), "output_shape has 1 values");
}

TEST(TransposedWindowGeometryTest, Errors) {
  ExpectInvalid(ComputeTransposedWindowGeometry({2}, TSpec({1}, {1}, {1, 1})), "gives an output of size 0");
  TransposedWindowSpec ceil = TSpec({3});
  ceil.window.ceil_mode = true;
  ExpectInvalid(ComputeTransposedWindowGeometry({3}, ceil), "ceil_mode");
  ExpectInvalid(ComputeTransposedWindowGeometry({kBatchDim}, TSpec({3})), "symbolic batch dimension");
  ExpectInvalid(ComputeTransposedWindowGeometry({0}, TSpec({3})), "has size 0");
}

TEST(WindowSpecFromAttrsTest, ReadsAttributesWithOnnxDefaults) {
  absl::StatusOr<WindowSpec> empty = WindowSpecFromAttrs({});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->kernel.empty());
  EXPECT_EQ(empty->auto_pad, AutoPad::kNotSet);
  EXPECT_FALSE(empty->ceil_mode);

  AttrMap attrs = {{"kernel_shape", AttrValue::Ints({3, 3})}, {"strides", AttrValue::Ints({2, 2})},
                   {"dilations", AttrValue::Ints({1, 2})},    {"pads", AttrValue::Ints({1, 1, 0, 0})},
                   {"auto_pad", AttrValue::String("NOTSET")}, {"ceil_mode", AttrValue::Int(1)}};
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(attrs);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->kernel, ElementsAre(3, 3));
  EXPECT_THAT(spec->strides, ElementsAre(2, 2));
  EXPECT_THAT(spec->dilations, ElementsAre(1, 2));
  EXPECT_THAT(spec->pads, ElementsAre(1, 1, 0, 0));
  EXPECT_TRUE(spec->ceil_mode);

  ExpectInvalid(WindowSpecFromAttrs({{"auto_pad", AttrValue::String("SAME")}}), "auto_pad is 'SAME'");
  ExpectInvalid(WindowSpecFromAttrs({{"ceil_mode", AttrValue::Int(2)}}), "ceil_mode is 2");
  ExpectInvalid(WindowSpecFromAttrs({{"strides", AttrValue::Int(2)}}), "attribute 'strides' has type");

  absl::StatusOr<TransposedWindowSpec> t =
      TransposedWindowSpecFromAttrs({{"output_padding", AttrValue::Ints({1})}, {"output_shape", AttrValue::Ints({9})}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->output_padding, ElementsAre(1));
  EXPECT_THAT(t->output_shape, ElementsAre(9));
}

}  // namespace
}  // namespace tsr
