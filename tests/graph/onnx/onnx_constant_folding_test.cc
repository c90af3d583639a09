// Import-time constant folding (graph/onnx/onnx_constant_folding.h), through the
// importer: exporter-style Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains,
// Shape of a symbolic dim bound by options, Shape's start/end, multi-output nodes, the
// size limit, stateful ops and the option that turns folding off.
#include "graph/onnx/onnx_constant_folding.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The op of the node named `name` in the imported graph ("" when absent).
std::string OpOf(const ImportedModel& model, const std::string& name) {
  const Node* n = model.graph.FindNode(name);
  return n == nullptr ? "" : n->op();
}

// The value of the Constant named `name` as int64s (empty when not a Constant).
std::vector<int64_t> ConstantInts(const ImportedModel& model, const std::string& name) {
  const Node* n = model.graph.FindNode(name);
  if (n == nullptr) return {};
  const Tensor* value = model.graph.ConstantValue(n->output(0));
  return value == nullptr ? std::vector<int64_t>{} : value->ToInt64Vector();
}

// What torch.onnx.export writes for x.view(x.size(0), -1): the leading dim read at run
// time, cast through float and divided as exporters do for size arithmetic.
onnx::ModelProto ReshapeByShapeChain(const std::vector<Dim>& x_dims) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, x_dims);
  AddInitializer(m, Int64Tensor("zero", {}, {0}));
  AddInitializer(m, Int64Tensor("axes0", {1}, {0}));
  AddInitializer(m, Int64Tensor("minus_one", {1}, {-1}));
  AddInitializer(m, FloatTensor("two", {}, {2}));
  AddNode(m, "Shape", {"x"}, {"dims"});
  SetInt(AddNode(m, "Gather", {"dims", "zero"}, {"batch"}), "axis", 0);
  SetInt(AddNode(m, "Cast", {"batch"}, {"batch_f"}), "to", TensorProto::FLOAT);
  AddNode(m, "Mul", {"batch_f", "two"}, {"twice_f"});
  AddNode(m, "Div", {"twice_f", "two"}, {"batch_again_f"});
  SetInt(AddNode(m, "Cast", {"batch_again_f"}, {"batch_again"}), "to", TensorProto::INT64);
  AddNode(m, "Unsqueeze", {"batch_again", "axes0"}, {"batch_1d"});
  SetInt(AddNode(m, "Concat", {"batch_1d", "minus_one"}, {"target"}), "axis", 0);
  AddNode(m, "Reshape", {"x", "target"}, {"y"});
  AddOutput(m, "y");
  return m;
}

TEST(OnnxConstantFoldingTest, FoldsAShapeChainFeedingReshape) {
  absl::StatusOr<ImportedModel> model = Import(ReshapeByShapeChain({2, 3, 4}));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_folded_nodes, 8);
  for (const char* name : {"dims", "batch", "batch_f", "twice_f", "batch_again_f", "batch_again", "batch_1d"}) {
    EXPECT_EQ(OpOf(*model, name), "Constant") << name;
  }
  EXPECT_THAT(ConstantInts(*model, "dims"), ElementsAre(2, 3, 4));
  EXPECT_THAT(ConstantInts(*model, "twice_f"), ElementsAre(4));
  EXPECT_THAT(ConstantInts(*model, "target"), ElementsAre(2, -1));
  EXPECT_EQ(model->graph.FindNode("target")->output_type(0), TensorType(DType::kI64, Shape{2}));
  EXPECT_EQ(OpOf(*model, "y"), "Reshape");

  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i) - 5.5f;
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(ReshapeByShapeChain({2, 3, 4}), {{"x", F32({2, 3, 4}, x)}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear((*out)[0], {2, 12}, std::vector<double>(x.begin(), x.end()));
}

TEST(OnnxConstantFoldingTest, OffByOptionTheChainStaysAndReshapeNeedsItsValue) {
  OnnxImportOptions options;
  options.fold_constants = false;
  absl::StatusOr<ImportedModel> model = Import(ReshapeByShapeChain({2, 3, 4}), options);
  // Tessera's Reshape infers its output from the shape operand's value, which only
  // folding provides here.
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("Reshape"));

  // Without a consumer that needs the value, the chain imports unfolded.
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  AddNode(m, "Shape", {"x"}, {"dims"});
  AddOutput(m, "dims");
  absl::StatusOr<ImportedModel> unfolded = Import(m, options);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  EXPECT_EQ(unfolded->num_folded_nodes, 0);
  EXPECT_EQ(OpOf(*unfolded, "dims"), "Shape");
}

TEST(OnnxConstantFoldingTest, ShapeOfASymbolicDimFoldsOnlyWhenBound) {
  OnnxImportOptions bound;
  bound.dim_bindings = {{"batch", 5}};
  absl::StatusOr<ImportedModel> model = Import(ReshapeByShapeChain({"batch", 3, 4}), bound);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(ConstantInts(*model, "dims"), ElementsAre(5, 3, 4));
  EXPECT_THAT(ConstantInts(*model, "target"), ElementsAre(5, -1));
  EXPECT_EQ(model->graph.FindNode("y")->output_type(0), TensorType(DType::kF32, Shape{5, 12}));

  // Left symbolic (Tessera's batch dim N), the shape is only known at run time.
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {"batch", 3});
  AddNode(m, "Shape", {"x"}, {"dims"});
  AddOutput(m, "dims");
  absl::StatusOr<ImportedModel> symbolic = Import(m);
  ASSERT_TRUE(symbolic.ok()) << symbolic.status();
  EXPECT_EQ(symbolic->num_folded_nodes, 0);
  EXPECT_EQ(OpOf(*symbolic, "dims"), "Shape");
}

TEST(OnnxConstantFoldingTest, ShapeStartAndEndAndSize) {
  onnx::ModelProto m = MakeModel(15);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3, 4, 5});
  onnx::NodeProto* middle = AddNode(m, "Shape", {"x"}, {"middle"});
  SetInt(middle, "start", 1);
  SetInt(middle, "end", -1);
  SetInt(AddNode(m, "Shape", {"x"}, {"tail"}), "start", -2);
  AddNode(m, "Size", {"x"}, {"count"});
  AddOutput(m, "middle");
  AddOutput(m, "tail");
  AddOutput(m, "count");
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(ConstantInts(*model, "middle"), ElementsAre(3, 4));
  EXPECT_THAT(ConstantInts(*model, "tail"), ElementsAre(4, 5));
  EXPECT_THAT(ConstantInts(*model, "count"), ElementsAre(120));
  EXPECT_EQ(model->num_folded_nodes, 3);
}

TEST(OnnxConstantFoldingTest, MultiOutputNodeBecomesOneConstantPerOutput) {
  onnx::ModelProto m = MakeModel(13);
  AddInitializer(m, Int64Tensor("v", {5}, {10, 11, 12, 13, 14}));
  AddInitializer(m, Int64Tensor("sizes", {2}, {2, 3}));
  SetInt(AddNode(m, "Split", {"v", "sizes"}, {"head", "rest"}), "axis", 0);
  AddOutput(m, "head");
  AddOutput(m, "rest");
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_folded_nodes, 1);
  EXPECT_THAT(ConstantInts(*model, "head"), ElementsAre(10, 11));
  EXPECT_THAT(ConstantInts(*model, "rest"), ElementsAre(12, 13, 14));
}

// Expand of a scalar to [rows, 256]: at 256 rows it has exactly the default limit's
// 65536 elements and folds; one more row and it stays an Expand, unless the limit is
// raised.
onnx::ModelProto ExpandModel(int64_t rows) {
  onnx::ModelProto m = MakeModel(13);
  AddInitializer(m, FloatTensor("one", {}, {1}));
  AddInitializer(m, Int64Tensor("shape", {2}, {rows, 256}));
  AddNode(m, "Expand", {"one", "shape"}, {"big"});
  AddOutput(m, "big");
  return m;
}

TEST(OnnxConstantFoldingTest, TensorsAboveTheLimitStayUnfolded) {
  absl::StatusOr<ImportedModel> at_limit = Import(ExpandModel(256));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(OpOf(*at_limit, "big"), "Constant");

  absl::StatusOr<ImportedModel> above = Import(ExpandModel(257));
  ASSERT_TRUE(above.ok()) << above.status();
  EXPECT_EQ(above->num_folded_nodes, 0);
  EXPECT_EQ(OpOf(*above, "big"), "Expand");

  OnnxImportOptions raised;
  raised.max_folded_elements = 257 * 256;
  absl::StatusOr<ImportedModel> folded = Import(ExpandModel(257), raised);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(OpOf(*folded, "big"), "Constant");
  EXPECT_EQ(folded->graph.FindNode("big")->output_type(0), TensorType(DType::kF32, Shape{257, 256}));
}

TEST(OnnxConstantFoldingTest, StatefulOpsAndVariablesAreNotFolded) {
  onnx::ModelProto m = MakeModel(13);
  AddInitializer(m, FloatTensor("w", {4}, {1, 2, 3, 4}));
  AddNode(m, "Dropout", {"w"}, {"dropped"});
  AddNode(m, "Neg", {"w"}, {"negated"});
  AddOutput(m, "dropped");
  AddOutput(m, "negated");
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OpOf(*model, "dropped"), "Dropout");
  EXPECT_EQ(OpOf(*model, "negated"), "Constant");

  // Trainable initializers change during fine-tuning: what reads them is computed.
  OnnxImportOptions variables;
  variables.initializers_as_variables = true;
  absl::StatusOr<ImportedModel> trainable = Import(m, variables);
  ASSERT_TRUE(trainable.ok()) << trainable.status();
  EXPECT_EQ(trainable->num_folded_nodes, 0);
  EXPECT_EQ(OpOf(*trainable, "negated"), "Neg");
}

TEST(OnnxConstantFoldingTest, FoldedValuesEqualTheComputedOnes) {
  // The same float arithmetic folded and (with folding off) run by the session.
  onnx::ModelProto m = MakeModel(13);
  AddInitializer(m, FloatTensor("a", {2, 3}, {0.5f, -1.25f, 3, 7.75f, -0.1f, 2}));
  AddInitializer(m, FloatTensor("b", {3}, {1.5f, 0.3f, -2}));
  AddNode(m, "Mul", {"a", "b"}, {"ab"});
  AddNode(m, "Erf", {"ab"}, {"erf"});
  AddNode(m, "Div", {"erf", "b"}, {"out"});
  AddOutput(m, "out");
  absl::StatusOr<ImportedModel> folded = Import(m);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->num_folded_nodes, 3);
  OnnxImportOptions off;
  off.fold_constants = false;
  absl::StatusOr<std::vector<Tensor>> computed = ImportAndRun(m, {}, off);
  ASSERT_TRUE(computed.ok()) << computed.status();
  const Tensor* value = folded->graph.ConstantValue(folded->graph.FindNode("out")->output(0));
  ASSERT_NE(value, nullptr);
  EXPECT_TRUE(value->BitwiseEquals((*computed)[0])) << value->DebugString() << " vs " << (*computed)[0].DebugString();
}

}  // namespace
}  // namespace tsr::onnx_test
