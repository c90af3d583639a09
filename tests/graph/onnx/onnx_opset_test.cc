// Opset-dependent forms (the same computation written for opset 11 and for 13+/18),
// initializers as constants or variables, symbolic dims, and the opset range.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

using ::testing::HasSubstr;

Tensor Iota6() { return F32({6}, {1, 2, 3, 4, 5, 6}); }

// Split x [n] into `outputs` outputs y0.. with the sizes in `split` (as an attribute
// before opset 13, an input from 13; none when empty).
onnx::ModelProto SplitModel(int64_t opset, int n, int outputs, const std::vector<int64_t>& split) {
  onnx::ModelProto m = MakeModel(opset);
  AddInput(m, "x", TensorProto::FLOAT, {n});
  std::vector<std::string> outs;
  for (int i = 0; i < outputs; ++i) outs.push_back(absl::StrCat("y", i));
  std::vector<std::string> ins = {"x"};
  if (!split.empty() && opset >= 13) {
    AddInitializer(m, Int64Tensor("split", {static_cast<int64_t>(split.size())}, split));
    ins.push_back("split");
  }
  onnx::NodeProto* node = AddNode(m, "Split", ins, outs, "split_node");
  if (!split.empty() && opset < 13) SetInts(node, "split", split);
  for (const std::string& o : outs) AddOutput(m, o);
  return m;
}

TEST(OnnxOpsetTest, SplitAttributeBefore13InputFrom13) {
  for (int64_t opset : {11, 12, 13, 17}) {
    SCOPED_TRACE(absl::StrCat("opset ", opset));
    absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(SplitModel(opset, 6, 2, {2, 4}), {{"x", Iota6()}});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear((*y)[0], {2}, {1, 2});
    ExpectTensorNear((*y)[1], {4}, {3, 4, 5, 6});
    // Without sizes: equal parts, one per output.
    y = ImportAndRun(SplitModel(opset, 6, 3, {}), {{"x", Iota6()}});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear((*y)[2], {2}, {5, 6});
    // Before 18 the parts must be equal.
    absl::StatusOr<ImportedModel> bad = Import(SplitModel(opset, 6, 4, {}));
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.status().message(), HasSubstr("does not divide"));
    EXPECT_THAT(bad.status().message(), HasSubstr("'split_node' (Split, opset"));
  }
  // Opset 18: num_outputs, the last part smaller.
  onnx::ModelProto m = SplitModel(18, 7, 3, {});
  SetInt(m.mutable_graph()->mutable_node(0), "num_outputs", 3);
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({7}, {1, 2, 3, 4, 5, 6, 7})}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[2], {1}, {7});
  // An input 'split' at opset 11 is an error, not silently read.
  m = SplitModel(13, 6, 2, {2, 4});
  m.mutable_opset_import(0)->set_version(11);
  absl::StatusOr<ImportedModel> bad = Import(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("exists from opset 13"));
}

TEST(OnnxOpsetTest, SqueezeUnsqueezeAxesAttributeBefore13) {
  for (int64_t opset : {11, 13}) {
    SCOPED_TRACE(absl::StrCat("opset ", opset));
    onnx::ModelProto m = MakeModel(opset);
    AddInput(m, "x", TensorProto::FLOAT, {1, 3, 1});
    onnx::NodeProto* sq = AddNode(m, "Squeeze", {"x"}, {"s"});
    onnx::NodeProto* un = AddNode(m, "Unsqueeze", {"s"}, {"u"});
    if (opset < 13) {
      SetInts(sq, "axes", {0});
      SetInts(un, "axes", {0});
    } else {
      AddInitializer(m, Int64Tensor("axes", {1}, {0}));
      sq->add_input("axes");
      un->add_input("axes");
    }
    AddOutput(m, "s");
    AddOutput(m, "u");
    absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({1, 3, 1}, {1, 2, 3})}});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear((*y)[0], {3, 1}, {1, 2, 3});
    ExpectTensorNear((*y)[1], {1, 3, 1}, {1, 2, 3});
  }
  // Unsqueeze-11 needs its axes.
  onnx::ModelProto m = MakeModel(11);
  AddInput(m, "x", TensorProto::FLOAT, {3});
  AddNode(m, "Unsqueeze", {"x"}, {"u"}, "unsq");
  AddOutput(m, "u");
  absl::StatusOr<ImportedModel> bad = Import(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'unsq' (Unsqueeze, opset 11): required attribute 'axes'"));
}

// ReduceSum moved its axes to an input at 13, the other reductions at 18.
TEST(OnnxOpsetTest, ReduceAxesAttributeOrInput) {
  struct Case {
    std::string op;
    int64_t opset;
    bool axes_input;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"ReduceSum", 11, false, {6, 15}},   {"ReduceSum", 13, true, {6, 15}},
      {"ReduceMean", 17, false, {2, 5}},   {"ReduceMean", 18, true, {2, 5}},
      {"ReduceMax", 13, false, {3, 6}},    {"ReduceMin", 18, true, {1, 4}},
      {"ReduceProd", 11, false, {6, 120}}, {"ReduceL2", 18, true, {std::sqrt(14.0), std::sqrt(77.0)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.op, " opset ", c.opset));
    onnx::ModelProto m = MakeModel(c.opset);
    AddInput(m, "x", TensorProto::FLOAT, {2, 3});
    onnx::NodeProto* n = AddNode(m, c.op, {"x"}, {"y"}, "r");
    SetInt(n, "keepdims", 0);
    if (c.axes_input) {
      AddInitializer(m, Int64Tensor("axes", {1}, {1}));
      n->add_input("axes");
    } else {
      SetInts(n, "axes", {1});
    }
    AddOutput(m, "y");
    absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({2, 3}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear((*y)[0], {2}, c.expected);
    // The other form at the same opset is an error.
    onnx::ModelProto wrong = MakeModel(c.opset);
    AddInput(wrong, "x", TensorProto::FLOAT, {2, 3});
    onnx::NodeProto* w = AddNode(wrong, c.op, {"x"}, {"y"}, "r");
    if (c.axes_input) {
      SetInts(w, "axes", {1});
    } else {
      AddInitializer(wrong, Int64Tensor("axes", {1}, {1}));
      w->add_input("axes");
    }
    AddOutput(wrong, "y");
    absl::StatusOr<ImportedModel> bad = Import(wrong);
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.status().message(), HasSubstr("axes"));
  }
  // No axes before the input form: everything is reduced (keepdims defaults to 1).
  onnx::ModelProto m = MakeModel(11);
  AddInput(m, "x", TensorProto::FLOAT, {2, 3});
  AddNode(m, "ReduceMax", {"x"}, {"y"});
  AddOutput(m, "y");
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {1, 1}, {6});
}

onnx::ModelProto SoftmaxModel(int64_t opset, std::vector<Dim> dims, int64_t axis) {
  onnx::ModelProto m = MakeModel(opset);
  AddInput(m, "x", TensorProto::FLOAT, dims);
  SetInt(AddNode(m, "Softmax", {"x"}, {"y"}), "axis", axis);
  AddOutput(m, "y");
  return m;
}

// Before 13 Softmax normalizes over the flattened dims from `axis` on; from 13 along
// `axis` only.
TEST(OnnxOpsetTest, SoftmaxCoercedTo2DBefore13) {
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  const double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0);
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(SoftmaxModel(11, {1, 2, 2}, 1), {{"x", x}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {1, 2, 2}, {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s, std::exp(4.0) / s});

  y = ImportAndRun(SoftmaxModel(13, {1, 2, 2}, 1), {{"x", x}});
  ASSERT_TRUE(y.ok()) << y.status();
  const double a = 1 / (1 + std::exp(2.0)), b = 1 - a;  // pairs (1,3) and (2,4) along axis 1
  ExpectTensorNear((*y)[0], {1, 2, 2}, {a, a, b, b});

  // With a batch dim the coercion still works (the batch becomes -1 in the Reshape).
  const Tensor x2 = F32({2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  y = ImportAndRun(SoftmaxModel(11, {"batch", 2, 2}, 1), {{"x", x2}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {2, 2, 2},
                   {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s, std::exp(4.0) / s, std::exp(1.0) / s,
                    std::exp(2.0) / s, std::exp(3.0) / s, std::exp(4.0) / s});
}

TEST(OnnxOpsetTest, DropoutRatioAttributeBefore12) {
  onnx::ModelProto m = MakeModel(11);
  AddInput(m, "x", TensorProto::FLOAT, {3});
  SetFloat(AddNode(m, "Dropout", {"x"}, {"y"}), "ratio", 0.3f);
  AddOutput(m, "y");
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({3}, {1, 2, 3})}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {3}, {1, 2, 3});
}

TEST(OnnxOpsetTest, BatchNormTrainingOutputsBefore14AreRefused) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) AddInitializer(m, FloatTensor(p, {2}, {1, 1}));
  AddNode(m, "BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "mean", "var"}, "bn");
  AddOutput(m, "y");
  absl::StatusOr<ImportedModel> bad = Import(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(bad.status().message(), HasSubstr("'bn' (BatchNormalization, opset 13): output 1 ('mean')"));
}

onnx::ModelProto LinearModel() {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {"batch", 2});
  AddInitializer(m, FloatTensor("w", {2, 1}, {1, 2}));
  AddInitializer(m, Int64Tensor("shape", {1}, {-1}));
  AddNode(m, "MatMul", {"x", "w"}, {"xw"});
  AddNode(m, "Reshape", {"xw", "shape"}, {"y"});
  AddOutput(m, "y");
  return m;
}

TEST(OnnxOpsetTest, InitializersAsConstantsOrVariables) {
  for (bool as_variables : {false, true}) {
    SCOPED_TRACE(as_variables ? "variables" : "constants");
    OnnxImportOptions options;
    options.initializers_as_variables = as_variables;
    absl::StatusOr<ImportedModel> model = Import(LinearModel(), options);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_THAT(model->initializer_names, ::testing::ElementsAre("w", "shape"));
    EXPECT_THAT(model->input_names, ::testing::ElementsAre("x"));
    EXPECT_EQ(model->graph.FindNode("w")->op(), as_variables ? "Variable" : "Constant");
    EXPECT_EQ(model->graph.FindNode("shape")->op(), "Constant");  // an integer initializer stays constant
    absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(LinearModel(), {{"x", F32({2, 2}, {1, 1, 3, 4})}}, options);
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear((*y)[0], {2}, {3, 11});
  }
  // A variable is trainable and readable by name through a Session.
  OnnxImportOptions options;
  options.initializers_as_variables = true;
  absl::StatusOr<ImportedModel> model = Import(LinearModel(), options);
  ASSERT_TRUE(model.ok());
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(std::move(model->graph), {.device = "reference"});
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<Tensor> w = (*session)->GetVariable("w");
  ASSERT_TRUE(w.ok()) << w.status();
  ExpectTensorNear(*w, {2, 1}, {1, 2});
}

TEST(OnnxOpsetTest, SymbolicDims) {
  // Unbound: the batch dimension, any batch size at run time.
  absl::StatusOr<ImportedModel> model = Import(LinearModel());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.FindNode("x")->output_type(0).shape, Shape({kBatchDim, 2}));
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(LinearModel(), {{"x", F32({3, 2}, {1, 0, 0, 1, 1, 1})}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {3}, {1, 2, 3});

  // Bound by name.
  OnnxImportOptions bound;
  bound.dim_bindings["batch"] = 4;
  model = Import(LinearModel(), bound);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.FindNode("x")->output_type(0).shape, Shape({4, 2}));

  // Two distinct unbound names cannot both be the one batch dim.
  onnx::ModelProto two = MakeModel(13);
  AddInput(two, "x", TensorProto::FLOAT, {"batch", "seq"});
  AddNode(two, "Relu", {"x"}, {"y"});
  AddOutput(two, "y");
  absl::StatusOr<ImportedModel> bad = Import(two);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("single batch dimension"));
  OnnxImportOptions seq;
  seq.dim_bindings["seq"] = 7;
  model = Import(two, seq);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.FindNode("x")->output_type(0).shape, Shape({kBatchDim, 7}));

  // Mapping to the batch dim can be turned off.
  OnnxImportOptions strict;
  strict.symbolic_dims_as_batch = false;
  bad = Import(LinearModel(), strict);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("graph input 'x' dim 0 is symbolic 'batch'; bind it"));
}

// Before opset 11, a node imports when its op's definition is the one in effect at
// opset 11 (Relu-6, Sin-7) and is refused otherwise (Clip-6 took min/max attributes).
TEST(OnnxOpsetTest, OlderOpsetsImportOpsWithTheMappedDefinition) {
  for (int64_t opset : {7, 9, 10}) {
    SCOPED_TRACE(absl::StrCat("opset ", opset));
    onnx::ModelProto m = MakeModel(opset);
    AddInput(m, "x", TensorProto::FLOAT, {2});
    AddNode(m, "Relu", {"x"}, {"r"}, "relu");
    AddNode(m, "Sin", {"r"}, {"y"}, "sin");
    AddOutput(m, "y");
    absl::StatusOr<ImportedModel> model = Import(m);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->opset_version, opset);

    onnx::ModelProto clip = MakeModel(opset);
    AddInput(clip, "x", TensorProto::FLOAT, {2});
    AddNode(clip, "Clip", {"x"}, {"y"}, "clip");
    AddOutput(clip, "y");
    absl::StatusOr<ImportedModel> bad = Import(clip);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(bad.status().message(), HasSubstr("'Clip' has its opset-6 definition; Tessera imports the one in "
                                                  "effect at opset 11 (opset-11)"));
  }
}

TEST(OnnxOpsetTest, OpsetRangeAndOpIntroduction) {
  for (int64_t opset : {10, 19}) {  // Softmax-1 at 10 coerced to 2-D
    absl::StatusOr<ImportedModel> bad = Import(SoftmaxModel(opset, {2, 2}, 1));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(bad.status().message(), HasSubstr(absl::StrCat("opset ", opset)));
  }
  absl::StatusOr<ImportedModel> softmax9 = Import(SoftmaxModel(9, {2, 2}, 1));
  ASSERT_FALSE(softmax9.ok());
  EXPECT_THAT(softmax9.status().message(), HasSubstr("'Softmax' has its opset-1 definition"));
  EXPECT_FALSE(Import(MakeModel(0)).ok());

  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2, 2});
  AddInitializer(m, FloatTensor("s", {2}, {1, 1}));
  AddNode(m, "LayerNormalization", {"x", "s"}, {"y"}, "ln");
  AddOutput(m, "y");
  absl::StatusOr<ImportedModel> bad = Import(m);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("exists from opset 17"));
}

// Weights listed as graph inputs too (IR < 4 style) are initializers, not feeds; every
// node is named after its first output, so ONNX tensor names fetch intermediates.
// An input that sets an output shape (TopK's K) must be a value at import: bound inputs
// become Constants and leave the feeds.
TEST(OnnxOpsetTest, BoundInputsBecomeConstants) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {4});
  AddInput(m, "k", TensorProto::INT64, {1});
  AddNode(m, "TopK", {"x", "k"}, {"values", "indices"}, "top");
  AddOutput(m, "values");
  EXPECT_FALSE(Import(m).ok());  // K unknown: no static output shape

  OnnxImportOptions options;
  options.input_values["k"] = Tensor::FromVector<int64_t>(Shape({1}), {2});
  absl::StatusOr<ImportedModel> model = Import(m, options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->input_names, std::vector<std::string>{"x"});
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {{"x", F32({4}, {1, 5, 3, 4})}}, options);
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {2}, {5, 4});

  OnnxImportOptions wrong_dtype;
  wrong_dtype.input_values["k"] = Tensor::FromVector<int32_t>(Shape({1}), {2});
  EXPECT_THAT(Import(m, wrong_dtype).status().message(),
              HasSubstr("graph input 'k' is declared i64 but its bound value is i32"));
  OnnxImportOptions wrong_shape;
  wrong_shape.input_values["k"] = Tensor::FromVector<int64_t>(Shape({2}), {2, 2});
  EXPECT_THAT(Import(m, wrong_shape).status().message(), HasSubstr("graph input 'k''s bound value has shape"));
  OnnxImportOptions unknown;
  unknown.input_values["kk"] = Tensor::FromVector<int64_t>(Shape({1}), {2});
  EXPECT_THAT(Import(m, unknown).status().message(), HasSubstr("'kk', which is not a graph input"));
}

TEST(OnnxOpsetTest, NamesFollowTheModel) {
  onnx::ModelProto m = LinearModel();
  AddInput(m, "w", TensorProto::FLOAT, {2, 1});
  absl::StatusOr<ImportedModel> model = Import(m);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(model->input_names, ::testing::ElementsAre("x"));
  EXPECT_THAT(model->output_names, ::testing::ElementsAre("y"));
  EXPECT_EQ(model->graph.FindNode("xw")->op(), "MatMul");
  EXPECT_EQ(model->opset_version, 13);
  EXPECT_EQ(model->producer_name, "tessera-test");
}

}  // namespace
}  // namespace tsr::onnx_test
