// Shape inference of the optimizer ops and the verifier's checks on Variable updates.
#include <optional>

#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;
using ::tsr::testing::F32;
using ::tsr::testing::I64;
using ::tsr::testing::Infer;
using ::tsr::testing::Str;
using ::tsr::testing::T;

TEST(OptimizerOpsTest, OutputsHaveTheParameterType) {
  EXPECT_EQ(Str(Infer("SGDUpdate", {F32({3, 4}), F32({3, 4}), F32({})})), "f32[3,4]");
  EXPECT_EQ(Str(Infer("MomentumUpdate", {F32({5}), F32({5}), F32({5}), F32({})})), "f32[5], f32[5]");
  EXPECT_EQ(Str(Infer("AdamUpdate", {T(DType::kF64, {2}), T(DType::kF64, {2}), T(DType::kF64, {2}), T(DType::kF64, {2}),
                                     T(DType::kF64, {}), I64({})})),
            "f64[2], f64[2], f64[2]");
  EXPECT_EQ(Str(Infer("RMSPropUpdate", {F32({}), F32({}), F32({}), F32({})})), "f32[], f32[]");
  EXPECT_EQ(Str(Infer("Increment", {I64({})})), "i64[]");
  EXPECT_EQ(Str(Infer("Assign", {F32({3, 2}), F32({3, 2})})), "f32[3,2]");
  EXPECT_EQ(Str(Infer("Assign", {I64({}), I64({})})), "i64[]");
}

TEST(OptimizerOpsTest, MismatchesAndBadAttributesAreErrors) {
  EXPECT_THAT(Str(Infer("SGDUpdate", {F32({3, 4}), F32({4, 3}), F32({})})),
              HasSubstr("input 1 ('grad') is f32[4,3] but the parameter is f32[3,4]"));
  EXPECT_THAT(Str(Infer("MomentumUpdate", {F32({5}), F32({6}), F32({5}), F32({})})), HasSubstr("input 1 ('velocity')"));
  EXPECT_THAT(Str(Infer("SGDUpdate", {F32({3}), F32({3}), F32({1})})), HasSubstr("('lr') has shape [1]"));
  EXPECT_THAT(Str(Infer("AdamUpdate", {F32({2}), F32({2}), F32({2}), F32({2}), F32({}), I64({1})})),
              HasSubstr("('step') has shape [1]"));
  EXPECT_THAT(Str(Infer("SGDUpdate", {F32({3}), T(DType::kF64, {3}), F32({})})), HasSubstr("f64"));
  EXPECT_THAT(
      Str(Infer("MomentumUpdate", {F32({5}), F32({5}), F32({5}), F32({})}, {{"momentum", AttrValue::Float(1.0)}})),
      HasSubstr("'momentum' is 1 but must be in [0, 1)"));
  EXPECT_THAT(Str(Infer("AdamUpdate", {F32({2}), F32({2}), F32({2}), F32({2}), F32({}), I64({})},
                        {{"weight_decay", AttrValue::Float(-1.0)}})),
              HasSubstr("'weight_decay' is -1 but must be >= 0"));
  EXPECT_THAT(Str(Infer("Increment", {I64({2})})), HasSubstr("scalar"));
  EXPECT_THAT(Str(Infer("Increment", {F32({})})), HasSubstr("f32"));
  EXPECT_THAT(Str(Infer("Assign", {F32({3}), F32({2})})),
              HasSubstr("input 1 ('value') is f32[2] but the variable is f32[3]"));
}

TEST(OptimizerOpsTest, VerifierRequiresUpdatesOfVariablesByOneNode) {
  {
    GraphBuilder b;
    const Output x = b.Input("x", DType::kF32, Shape({3}));
    b.Op1("SGDUpdate", {x, x, ops::Scalar(b, 0.1f)}, {}, "update");
    absl::StatusOr<Graph> g = b.Finish();
    EXPECT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("must be read directly from a Variable"));
  }
  {
    GraphBuilder b;
    const Output w = ops::Variable(b, "w", DType::kF32, Shape({3}));
    const Output lr = ops::Scalar(b, 0.1f);
    b.Op1("SGDUpdate", {w, w, lr}, {}, "first");
    b.Op1("SGDUpdate", {w, w, lr}, {}, "second");
    absl::StatusOr<Graph> g = b.Finish();
    EXPECT_FALSE(g.ok());
    EXPECT_THAT(g.status().message(), HasSubstr("Variable 'w' is updated by both 'first' and 'second'"));
  }
  {
    GraphBuilder b;
    const Output w = ops::Variable(b, "w", DType::kF32, Shape({3}));
    b.Op1("SGDUpdate", {w, w, ops::Scalar(b, 0.1f)}, {}, "only");
    EXPECT_TRUE(b.Finish().ok());
  }
}

}  // namespace
}  // namespace tsr
