// Import (and reference execution) of the ONNX ops mapped in graph/onnx/onnx_shape_ops.cc:
// Size, ConstantOfShape, EyeLike, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence,
// Resize (opset-11 and opset-13 forms), GatherND, ScatterND, Compress, NonZero and the
// Scatter alias — and the errors when a shape-determining input is not a constant.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;
using namespace ::tsr::onnx_test;  // NOLINT: the test helpers

TensorProto BoolTensor(const std::string& name, const std::vector<bool>& values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::BOOL);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (bool v : values) t.add_int32_data(v ? 1 : 0);
  return t;
}

TEST(OnnxShapeOpsTest, ConstantOfShapeAndSize) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  AddInitializer(m, Int64Tensor("shape", {2}, {2, 2}));
  TensorProto value;
  value.set_data_type(TensorProto::INT32);
  value.add_dims(1);
  value.add_int32_data(7);
  SetTensorAttr(AddNode(m, "ConstantOfShape", {"shape"}, {"c"}), "value", value);
  AddNode(m, "Size", {"x"}, {"n"});
  AddOutput(m, "c");
  AddOutput(m, "n");
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(m, {{"x", F32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kI32);
  ExpectTensorNear((*out)[0], {2, 2}, {7, 7, 7, 7});
  ExpectTensorNear((*out)[1], {}, {6});
}

TEST(OnnxShapeOpsTest, ConstantOfShapeNeedsAConstantShape) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "shape", TensorProto::INT64, {2});
  AddNode(m, "ConstantOfShape", {"shape"}, {"c"});
  AddOutput(m, "c");
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("ConstantOfShape"));
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("must be a constant"));
}

TEST(OnnxShapeOpsTest, ResizeOpset13ScalesAndOpset11Sizes) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1, 1, 2, 2});
  AddInitializer(m, FloatTensor("scales", {4}, {1, 1, 2, 2}));
  SetString(AddNode(m, "Resize", {"x", "", "scales"}, {"y"}), "mode", "linear");
  AddOutput(m, "y");
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(m, {{"x", F32({1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {1, 1, 4, 4},
                   {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});

  // Opset 11: roi and scales are required inputs, given empty beside the sizes.
  onnx::ModelProto m11 = MakeModel(11);
  AddInput(m11, "x", TensorProto::FLOAT, {1, 1, 2, 2});
  AddInitializer(m11, FloatTensor("roi", {0}, {}));
  AddInitializer(m11, FloatTensor("scales", {0}, {}));
  AddInitializer(m11, Int64Tensor("sizes", {4}, {1, 1, 3, 1}));
  onnx::NodeProto* n = AddNode(m11, "Resize", {"x", "roi", "scales", "sizes"}, {"y"});
  SetString(n, "coordinate_transformation_mode", "asymmetric");
  SetString(n, "nearest_mode", "floor");
  AddOutput(m11, "y");
  out = ImportAndRun(m11, {{"x", F32({1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Rows from sources 0, 2/3, 4/3 floored: 0, 0, 1.
  ExpectTensorNear((*out)[0], {1, 1, 3, 1}, {1, 1, 3});
}

TEST(OnnxShapeOpsTest, ResizeErrors) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1, 4});
  AddInput(m, "scales", TensorProto::FLOAT, {2});
  AddNode(m, "Resize", {"x", "", "scales"}, {"y"});
  AddOutput(m, "y");
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("must be a constant"));

  onnx::ModelProto m18 = MakeModel(18);
  AddInput(m18, "x", TensorProto::FLOAT, {1, 4});
  AddInitializer(m18, FloatTensor("scales", {2}, {1, 2}));
  SetInt(AddNode(m18, "Resize", {"x", "", "scales"}, {"y"}), "antialias", 1);
  AddOutput(m18, "y");
  model = Import(m18);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("antialias"));
}

TEST(OnnxShapeOpsTest, TriluEyeLikeAndDepthToSpace) {
  onnx::ModelProto m = MakeModel(14);
  AddInput(m, "x", TensorProto::FLOAT, {1, 4, 1, 1});
  AddInput(m, "sq", TensorProto::FLOAT, {2, 2});
  AddInitializer(m, Int64Tensor("k", {}, {-1}));
  SetInt(AddNode(m, "Trilu", {"sq", "k"}, {"t"}), "upper", 0);
  SetInt(AddNode(m, "EyeLike", {"sq"}, {"e"}), "dtype", TensorProto::INT32);
  onnx::NodeProto* d2s = AddNode(m, "DepthToSpace", {"x"}, {"d"});
  SetInt(d2s, "blocksize", 2);
  SetString(d2s, "mode", "CRD");
  SetInt(AddNode(m, "SpaceToDepth", {"d"}, {"s"}), "blocksize", 2);
  for (const char* o : {"t", "e", "d", "s"}) AddOutput(m, o);
  absl::StatusOr<std::vector<Tensor>> out =
      ImportAndRun(m, {{"x", F32({1, 4, 1, 1}, {1, 2, 3, 4})}, {"sq", F32({2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {2, 2}, {0, 0, 3, 0});
  EXPECT_EQ((*out)[1].dtype(), DType::kI32);
  ExpectTensorNear((*out)[1], {2, 2}, {1, 0, 0, 1});
  ExpectTensorNear((*out)[2], {1, 1, 2, 2}, {1, 2, 3, 4});
  // CRD with one output channel equals DCR, which SpaceToDepth undoes.
  ExpectTensorNear((*out)[3], {1, 4, 1, 1}, {1, 2, 3, 4});
}

TEST(OnnxShapeOpsTest, GatherScatterNDAndScatterAlias) {
  onnx::ModelProto m = MakeModel(16);
  AddInput(m, "data", TensorProto::FLOAT, {2, 2});
  AddInitializer(m, Int64Tensor("idx", {2, 1}, {1, 1}));
  AddInitializer(m, Int64Tensor("idx2", {2, 2}, {0, 1, 1, 0}));
  AddInitializer(m, FloatTensor("upd", {2, 2}, {10, 20, 30, 40}));
  AddNode(m, "GatherND", {"data", "idx2"}, {"g"});
  SetString(AddNode(m, "ScatterND", {"data", "idx", "upd"}, {"s"}), "reduction", "add");
  AddOutput(m, "g");
  AddOutput(m, "s");
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(m, {{"data", F32({2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {2}, {2, 3});
  ExpectTensorNear((*out)[1], {2, 2}, {1, 2, 43, 64});

  onnx::ModelProto s = MakeModel(11);
  AddInput(s, "data", TensorProto::FLOAT, {1, 3});
  AddInitializer(s, Int64Tensor("idx", {1, 1}, {2}));
  AddInitializer(s, FloatTensor("upd", {1, 1}, {9}));
  SetInt(AddNode(s, "Scatter", {"data", "idx", "upd"}, {"y"}), "axis", 1);
  AddOutput(s, "y");
  out = ImportAndRun(s, {{"data", F32({1, 3}, {1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {1, 3}, {1, 2, 9});
}

TEST(OnnxShapeOpsTest, CompressNonZeroReverseSequence) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {3, 2});
  AddInitializer(m, BoolTensor("cond", {true, false, true}));
  AddInitializer(m, FloatTensor("nz", {2, 2}, {0, 5, 6, 0}));
  AddInitializer(m, Int64Tensor("lens", {2}, {3, 1}));
  SetInt(AddNode(m, "Compress", {"x", "cond"}, {"c"}), "axis", 0);
  AddNode(m, "NonZero", {"nz"}, {"z"});
  AddNode(m, "ReverseSequence", {"x", "lens"}, {"r"});
  for (const char* o : {"c", "z", "r"}) AddOutput(m, o);
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(m, {{"x", F32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {2, 2}, {1, 2, 5, 6});
  ExpectTensorNear((*out)[1], {2, 2}, {0, 1, 1, 0});
  ExpectTensorNear((*out)[2], {3, 2}, {5, 2, 3, 4, 1, 6});

  onnx::ModelProto bad = MakeModel(13);
  AddInput(bad, "x", TensorProto::FLOAT, {3});
  AddInput(bad, "cond", TensorProto::BOOL, {3});
  AddNode(bad, "Compress", {"x", "cond"}, {"c"});
  AddOutput(bad, "c");
  absl::StatusOr<ImportedModel> model = Import(bad);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("must be a constant"));
}

}  // namespace
}  // namespace tsr
